import type { FastifyReply, FastifyRequest } from 'fastify';
import { inTransaction } from '../../db/transaction.js';
import { validateValue } from '../../http/validation.js';
import { DEFAULT_LIMIT } from '../../lib/pagination.js';
import { CreateAccountBody, ListAccountsQuery, UpdateAccountBody, type Account } from '../../modules/accounts/accounts.schemas.js';
import { createAccount, deleteAccount, getAccount, listAccounts, restoreAccount, updateAccount } from '../../modules/accounts/accounts.service.js';
import { deleteButton, registerConsoleTrash, trashLink } from './trash.pages.js';
import { listDeals } from '../../modules/deals/deals.service.js';
import { listLeads } from '../../modules/leads/leads.service.js';
import { recordsPointingAt } from '../../modules/objects/related-records.js';
import { RELATED_LIMIT } from './records.views.js';
import { getDealStages } from '../../modules/deals/stages.service.js';
import { defined, formBody, orNull, orUndefined, problemOf, queryPage, queryText, text, type FormBody, type FormProblem } from '../forms.js';
import { html } from '../html.js';
import { callerOfViewer, viewerOf, type AdminDeps, type AdminModule } from '../module.js';
import { ACCOUNT_LABELS, accountDetail, accountForm, accountFormValues, ACCOUNTS_PATH, accountSearchForm, accountsPager, accountsTable, emptyAccountForm, type AccountFormValues } from './accounts.views.js';
import { consoleTimeline, listPeople, TIMELINE_NOTICES } from './detail.views.js';
import { listControls, listControlsOf, listControlsQuery, rangeErrors } from '../list-controls.js';
import { checkedItemBody, customBody, customFieldsFor, customFormValues, editedWithCustom, readCustom } from './custom-fields.views.js';
import { customShown, formRelations } from './relation-items.js';
import { changedOnly, editConflict, submittedVersion } from './edit-version.js';

const NOTICES: Record<string, string> = { created: 'Account created.', saved: 'Changes saved.', unchanged: 'Nothing was changed.', ...TIMELINE_NOTICES };

function readForm(body: FormBody): AccountFormValues {
  const values = emptyAccountForm();
  for (const key of Object.keys(ACCOUNT_LABELS) as (keyof AccountFormValues)[]) values[key] = text(body, key);
  return values;
}

const accountFields = (deps: AdminDeps, organizationId: string) => customFieldsFor(deps, organizationId, 'accounts');

/**
 * The same body the API would receive: blank inputs are left out on create; an edit sends only the inputs changed
 * from the version the form showed (`before`), a blank one clearing the field (edit-version.ts).
 */
function toBody(v: AccountFormValues, before?: AccountFormValues): Record<string, unknown> {
  const blank = before ? orNull : orUndefined;
  const body: Record<string, unknown> = { name: v.name };
  for (const key of ['domain', 'email', 'phoneNumber', 'industry', 'website', 'ownerId'] as const) body[key] = blank(v[key].trim());
  return defined(before ? changedOnly(body, v, before) : body);
}

async function formPage(
  deps: AdminDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  opts: { accountId?: string; accountName?: string; version?: string; values: AccountFormValues; custom: Record<string, string>; problem?: FormProblem; status?: number },
) {
  const viewer = viewerOf(request);
  const creating = opts.accountId === undefined;
  const [users, fields] = await Promise.all([listPeople(deps.ctx.database.db, viewer.organization.id), accountFields(deps, viewer.organization.id)]);
  const relations = await formRelations(deps.ctx, viewer.organization, fields, opts.custom);
  return deps.render(request, reply, {
    title: creating ? 'New account' : `Edit ${opts.accountName}`,
    crumbs: ['Data', 'Accounts'],
    status: opts.status,
    body: accountForm(request, {
      action: creating ? ACCOUNTS_PATH : `${ACCOUNTS_PATH}/${opts.accountId}`,
      values: opts.values,
      problem: opts.problem,
      users,
      creating,
      custom: { fields, values: opts.custom, timeZone: viewer.organization.timezone, relations },
      version: opts.version,
    }),
  });
}

/** Data › Accounts: the searchable table (same `q` as GET /accounts), detail with deals and history, create and edit forms. */
export const accountsModule: AdminModule = {
  name: 'accounts',
  nav: [{ section: 'data', label: 'Accounts', href: ACCOUNTS_PATH, order: 20, description: 'Companies you sell to, with their deals.' }],
  objectPages: { account: ACCOUNTS_PATH },
  register(app, deps) {
    const { ctx } = deps;

    app.get('/data/accounts', async (request, reply) => {
      const viewer = viewerOf(request);
      const q = queryText(request, 'q').trim();
      const controls = listControlsOf(request);
      const query = { ...(q ? { q } : {}), ...listControlsQuery(controls), page: queryPage(request), limit: DEFAULT_LIMIT };
      const errors = [...validateValue(ListAccountsQuery, query, 'query'), ...rangeErrors(controls)];
      const [result, people, fields] = await Promise.all([
        errors.length ? undefined : listAccounts(ctx, viewer.organization.id, query),
        listPeople(ctx.database.db, viewer.organization.id),
        accountFields(deps, viewer.organization.id),
      ]);
      const custom = await customShown(ctx, viewer.organization, fields, result?.accounts ?? []);
      return deps.render(request, reply, {
        title: 'Accounts',
        crumbs: ['Data'],
        status: errors.length ? 400 : 200,
        body: html`<div class="toolbar">${accountSearchForm(q, errors.find((e) => e.field === 'q')?.message, listControls(controls, errors), controls)}<a class="button button--primary" href="${ACCOUNTS_PATH}/new">New account</a>${trashLink(ACCOUNTS_PATH)}</div>
${result ? html`${accountsTable(result.accounts, new Map(people.map((u) => [u.id, u.name])), viewer.organization.timezone, custom)}${accountsPager(q, result.pagination, controls)}` : ''}`,
      });
    });

    app.get('/data/accounts/new', async (request, reply) => formPage(deps, request, reply, { values: emptyAccountForm(), custom: {} }));

    app.post('/data/accounts', async (request, reply) => {
      const viewer = viewerOf(request);
      const values = readForm(formBody(request));
      const fields = await accountFields(deps, viewer.organization.id);
      const custom = readCustom(fields, formBody(request));
      try {
        const input = checkedItemBody<CreateAccountBody>(CreateAccountBody, 'accounts', fields, 'create', { ...toBody(values), ...customBody({ fields, values: custom, timeZone: viewer.organization.timezone }) });
        const account = await inTransaction(ctx, (trx) => createAccount(ctx, trx, callerOfViewer(viewer), input));
        return reply.redirect(`${ACCOUNTS_PATH}/${account.id}?notice=created`, 303);
      } catch (err) {
        return formPage(deps, request, reply, { values, custom, problem: problemOf(err), status: 400 });
      }
    });

    app.get<{ Params: { id: string } }>('/data/accounts/:id', async (request, reply) => {
      const viewer = viewerOf(request);
      const org = viewer.organization.id;
      const account = await getAccount(ctx, org, request.params.id);
      const [people, deals, leads, stages, history, pointing, fields] = await Promise.all([
        listPeople(ctx.database.db, org),
        listDeals(ctx, org, { accountId: account.id, page: 1, limit: 10 }),
        listLeads(ctx, org, { accountId: account.id, page: 1, limit: 10 }),
        getDealStages(ctx.database.db, org),
        consoleTimeline(deps, request, org, { object: 'account', id: account.id }),
        recordsPointingAt(ctx, viewer.organization, 'accounts', account.id, RELATED_LIMIT),
        accountFields(deps, org),
      ]);
      const custom = await customShown(ctx, viewer.organization, fields, [account]);
      return deps.render(request, reply, {
        title: account.name,
        crumbs: ['Data', 'Accounts'],
        status: history.error ? 400 : undefined,
        notice: NOTICES[queryText(request, 'notice')],
        body: accountDetail(account, {
          remove: deleteButton(request, ACCOUNTS_PATH, account.id, account.name),
          owner: people.find((u) => u.id === account.ownerId)?.name,
          deals: { deals: deals.deals, total: deals.pagination.total ?? 0 },
          leads: { leads: leads.leads, total: leads.pagination.total ?? 0 },
          pointing,
          stageLabels: new Map(stages.map((s) => [s.key, s.label])),
          history,
          timeZone: viewer.organization.timezone,
          custom,
        }),
      });
    });

    app.get<{ Params: { id: string } }>('/data/accounts/:id/edit', async (request, reply) => {
      const viewer = viewerOf(request);
      const account = await getAccount(ctx, viewer.organization.id, request.params.id);
      const custom = customFormValues(await accountFields(deps, viewer.organization.id), account, viewer.organization.timezone);
      return formPage(deps, request, reply, { accountId: account.id, accountName: account.name, version: ctx.entityTagger.tagOf(account), values: accountFormValues(account), custom });
    });

    app.post<{ Params: { id: string } }>('/data/accounts/:id', async (request, reply) => {
      const viewer = viewerOf(request);
      const timeZone = viewer.organization.timezone;
      // As it is now: when the form's version is still current, this is the account the form showed.
      const account = await getAccount(ctx, viewer.organization.id, request.params.id);
      const body = formBody(request);
      const values = readForm(body);
      const fields = await accountFields(deps, viewer.organization.id);
      const custom = readCustom(fields, body);
      try {
        const changes = { ...toBody(values, accountFormValues(account)), ...customBody({ fields, values: custom, timeZone }, account) };
        if (Object.keys(changes).length === 0) return reply.redirect(`${ACCOUNTS_PATH}/${account.id}?notice=unchanged`, 303);
        const patch = checkedItemBody<UpdateAccountBody>(UpdateAccountBody, 'accounts', fields, 'update', changes);
        await inTransaction(ctx, (trx) => updateAccount(ctx, trx, callerOfViewer(viewer), account.id, patch, { ifMatch: submittedVersion(body) }));
        return reply.redirect(`${ACCOUNTS_PATH}/${account.id}?notice=saved`, 303);
      } catch (err) {
        const conflict = editConflict<Account>(ctx, err, editedWithCustom('account', ACCOUNT_LABELS, accountFormValues, { fields, timeZone }), { ...values, ...custom });
        if (conflict) {
          const { item: current, version, problem } = conflict;
          return formPage(deps, request, reply, { accountId: current.id, accountName: current.name, version, values: accountFormValues(current), custom: customFormValues(fields, current, timeZone), problem, status: 409 });
        }
        return formPage(deps, request, reply, { accountId: account.id, accountName: account.name, version: submittedVersion(body), values, custom, problem: problemOf(err), status: 400 });
      }
    });

    registerConsoleTrash(app, deps, {
      route: '/data/accounts',
      href: () => ACCOUNTS_PATH,
      title: async () => ({ title: 'Accounts', crumbs: ['Data'] }),
      noun: 'account',
      trash: async (viewer, _params, page) => {
        const { accounts, pagination } = await listAccounts(ctx, viewer.organization.id, { page, limit: DEFAULT_LIMIT, deleted: true });
        return { items: accounts, pagination };
      },
      remove: (trx, caller, _params, id) => deleteAccount(ctx, trx, caller, id, false),
      restore: (trx, caller, _params, id) => restoreAccount(ctx, trx, caller, id),
      purge: (trx, caller, _params, id) => deleteAccount(ctx, trx, caller, id, true, { trashedOnly: true }),
    });
  },
};
