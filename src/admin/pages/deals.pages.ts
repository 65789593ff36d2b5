import type { FastifyReply, FastifyRequest } from 'fastify';
import { inTransaction } from '../../db/transaction.js';
import { validationFailed } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import { DEFAULT_LIMIT } from '../../lib/pagination.js';
import { CreateDealBody, ListDealsQuery, UpdateDealBody, type Deal } from '../../modules/deals/deals.schemas.js';
import { createDeal, deleteDeal, getDeal, listDeals, restoreDeal, updateDeal } from '../../modules/deals/deals.service.js';
import { deleteButton, registerConsoleTrash, trashLink } from './trash.pages.js';
import type { DealStage } from '../../modules/deals/stages.schemas.js';
import { getDealStages } from '../../modules/deals/stages.service.js';
import { checkedBody, defined, formBody, orNull, orUndefined, problemOf, queryPage, queryText, text, type FormBody, type FormProblem } from '../forms.js';
import { safeNext } from '../guard.js';
import { listControlsOf, listControlsQuery, rangeErrors, type ListControls } from '../list-controls.js';
import { href, html } from '../html.js';
import { callerOfViewer, viewerOf, type AdminDeps, type AdminModule, type Viewer } from '../module.js';
import { countByStage, newestInStage, type BoardFilter } from './board.store.js';
import { BOARD_CARDS, dealBoard, type BoardColumn } from './deals-board.views.js';
import { BOARD_PATH, DEAL_LABELS, dealDetail, dealFilterForm, dealForm, dealFormValues, DEALS_PATH, dealsPager, dealsTable, emptyDealForm, viewSwitch, type DealFilters, type DealFormValues } from './deals.views.js';
import { consoleTimeline, listPeople, TIMELINE_NOTICES } from './detail.views.js';
import { namesByIds, recentNames } from './names.store.js';
import { recordsPointingAt } from '../../modules/objects/related-records.js';
import { RELATED_LIMIT } from './records.views.js';
import { checkedItemBody, customBody, customFieldsFor, customFormValues, editedWithCustom, readCustom } from './custom-fields.views.js';
import { customShown, formRelations } from './relation-items.js';
import { changedOnly, editConflict, submittedVersion } from './edit-version.js';

const NOTICES: Record<string, string> = { created: 'Deal created.', saved: 'Changes saved.', unchanged: 'Nothing was changed.', moved: 'Deal moved.', ...TIMELINE_NOTICES };
const PICKER_SIZE = 50;

function readFilters(request: FastifyRequest): DealFilters {
  return { q: queryText(request, 'q').trim(), stage: queryText(request, 'stage'), ownerId: queryText(request, 'ownerId'), accountId: queryText(request, 'accountId') };
}

/** The filters (and the table's order and creation days) as the API's query; its schema's messages are shown next to the inputs. */
function listQuery(filters: DealFilters, page: number, limit: number, controls?: ListControls) {
  const query = defined({ q: filters.q || undefined, stage: filters.stage || undefined, ownerId: filters.ownerId || undefined, accountId: filters.accountId || undefined, ...(controls ? listControlsQuery(controls) : {}), page, limit });
  return { query: query as ListDealsQuery, errors: [...validateValue(ListDealsQuery, query, 'query'), ...(controls ? rangeErrors(controls) : [])] };
}

function readForm(body: FormBody): DealFormValues {
  const values = emptyDealForm();
  for (const key of Object.keys(DEAL_LABELS) as (keyof DealFormValues)[]) values[key] = text(body, key).trim();
  return values;
}

const dealFields = (deps: AdminDeps, organizationId: string) => customFieldsFor(deps, organizationId, 'deals');

/**
 * The same body the API would receive (amount as a decimal string, so its scale is kept): blank inputs are left
 * out on create; an edit sends only the inputs changed from the version the form showed (`before`), a blank one
 * clearing the field (edit-version.ts).
 */
function toBody(v: DealFormValues, before?: DealFormValues): Record<string, unknown> {
  const blank = before ? orNull : orUndefined;
  const body: Record<string, unknown> = { name: v.name, stage: v.stage || undefined };
  for (const key of ['amount', 'currency', 'accountId', 'leadId', 'ownerId', 'expectedCloseDate'] as const) body[key] = blank(v[key]);
  return defined(before ? changedOnly(body, v, before) : body);
}

async function formPage(
  deps: AdminDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  opts: { deal?: Deal; version?: string; values: DealFormValues; custom: Record<string, string>; problem?: FormProblem; status?: number },
) {
  const viewer = viewerOf(request);
  const org = viewer.organization.id;
  const db = deps.ctx.database.db;
  const [stages, people, accounts, leads, accountNames, leadNames, fields] = await Promise.all([
    getDealStages(db, org),
    listPeople(db, org),
    recentNames(db, 'accounts', org, PICKER_SIZE),
    recentNames(db, 'leads', org, PICKER_SIZE),
    namesByIds(db, 'accounts', org, [opts.values.accountId || null]),
    namesByIds(db, 'leads', org, [opts.values.leadId || null]),
    dealFields(deps, org),
  ]);
  const values = { ...opts.values, stage: opts.values.stage || stages[0]!.key };
  const relations = await formRelations(deps.ctx, viewer.organization, fields, opts.custom);
  return deps.render(request, reply, {
    title: opts.deal ? `Edit ${opts.deal.name}` : 'New deal',
    crumbs: ['Data', 'Deals'],
    status: opts.status,
    body: dealForm(request, {
      action: opts.deal ? `${DEALS_PATH}/${opts.deal.id}` : DEALS_PATH,
      values,
      problem: opts.problem,
      creating: !opts.deal,
      context: { stages, people, accounts, leads, accountName: accountNames.get(values.accountId), leadName: leadNames.get(values.leadId) },
      custom: { fields, values: opts.custom, timeZone: viewer.organization.timezone, relations },
      version: opts.version,
    }),
  });
}

async function detailPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, deal: Deal, opts: { moveError?: string; status?: number } = {}) {
  const viewer = viewerOf(request);
  const org = viewer.organization.id;
  const db = deps.ctx.database.db;
  const [stages, people, accounts, leads, history, pointing, fields] = await Promise.all([
    getDealStages(db, org),
    listPeople(db, org),
    namesByIds(db, 'accounts', org, [deal.accountId]),
    namesByIds(db, 'leads', org, [deal.leadId]),
    consoleTimeline(deps, request, org, { object: 'deal', id: deal.id }),
    recordsPointingAt(deps.ctx, viewer.organization, 'deals', deal.id, RELATED_LIMIT),
    dealFields(deps, org),
  ]);
  const custom = await customShown(deps.ctx, viewer.organization, fields, [deal]);
  return deps.render(request, reply, {
    title: deal.name,
    crumbs: ['Data', 'Deals'],
    status: opts.status ?? (history.error ? 400 : undefined),
    notice: NOTICES[queryText(request, 'notice')],
    body: dealDetail(request, deal, {
      remove: deleteButton(request, DEALS_PATH, deal.id, deal.name),
      stages,
      accountName: deal.accountId ? accounts.get(deal.accountId) : undefined,
      leadName: deal.leadId ? leads.get(deal.leadId) : undefined,
      owner: people.find((p) => p.id === deal.ownerId)?.name,
      history,
      pointing,
      timeZone: viewer.organization.timezone,
      custom,
      ...(opts.moveError ? { moveError: opts.moveError } : {}),
    }),
  });
}

/** One page of the table, or the validation problem of the filters (an unknown stage is the service's 400). */
async function tableBody(deps: AdminDeps, request: FastifyRequest, viewer: Viewer, filters: DealFilters) {
  const org = viewer.organization.id;
  const db = deps.ctx.database.db;
  const controls = listControlsOf(request);
  const { query, errors } = listQuery(filters, queryPage(request), DEFAULT_LIMIT, controls);
  const [stages, people, accountNames, fields] = await Promise.all([
    getDealStages(db, org),
    listPeople(db, org),
    namesByIds(db, 'accounts', org, [filters.accountId || null]),
    dealFields(deps, org),
  ]);
  let problem: FormProblem | undefined = errors.length ? problemOf(validationFailed(errors)) : undefined;
  let result: Awaited<ReturnType<typeof listDeals>> | undefined;
  if (!errors.length) {
    try {
      result = await listDeals(deps.ctx, org, query);
    } catch (err) {
      problem = problemOf(err);
    }
  }
  const names = {
    stages: new Map(stages.map((s) => [s.key, s.label])),
    people: new Map(people.map((p) => [p.id, p.name])),
    accounts: result ? await namesByIds(db, 'accounts', org, result.deals.map((d) => d.accountId)) : new Map<string, string>(),
  };
  const custom = await customShown(deps.ctx, viewer.organization, fields, result?.deals ?? []);
  const form = dealFilterForm(DEALS_PATH, filters, { stages, people, problem, withStage: true, accountName: accountNames.get(filters.accountId), controls });
  return {
    status: problem ? 400 : 200,
    body: html`${viewSwitch('table', filters)}<div class="toolbar">${form}<a class="button button--primary" href="${DEALS_PATH}/new">New deal</a>${trashLink(DEALS_PATH)}</div>
${result ? html`${dealsTable(result.deals, names, viewer.organization.timezone, custom)}${dealsPager(filters, result.pagination, controls)}` : ''}`,
  };
}

/** The board's columns: every stage's count in one query, then each stage's newest cards. */
async function boardColumns(deps: AdminDeps, organizationId: string, stages: readonly DealStage[], filter: BoardFilter): Promise<BoardColumn[]> {
  const { db, dialect } = deps.ctx.database;
  const counts = await countByStage(db, dialect, organizationId, filter);
  return Promise.all(
    stages.map(async (stage) => ({ stage, total: counts.get(stage.key) ?? 0, deals: counts.has(stage.key) ? await newestInStage(db, dialect, organizationId, stage.key, filter, BOARD_CARDS) : [] })),
  );
}

/** `back` (a console path, maybe with filters) with the confirmation's parameters added: where a moved card returns to. */
function withNotice(back: string, params: Record<string, string>): string {
  const url = new URL(back, 'http://console.invalid');
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return `${url.pathname}${url.search}`;
}

/** Data › Deals: the filtered table, the board by stage, detail with history, create and edit forms. */
export const dealsModule: AdminModule = {
  name: 'deals',
  nav: [{ section: 'data', label: 'Deals', href: DEALS_PATH, order: 30, description: 'Opportunities by stage, as a table or a board.' }],
  objectPages: { deal: DEALS_PATH },
  register(app, deps) {
    const { ctx } = deps;

    app.get('/data/deals', async (request, reply) => {
      const { status, body } = await tableBody(deps, request, viewerOf(request), readFilters(request));
      return deps.render(request, reply, { title: 'Deals', crumbs: ['Data'], status, body });
    });

    app.get('/data/deals/board', async (request, reply) => {
      const viewer = viewerOf(request);
      const org = viewer.organization.id;
      const filters = { ...readFilters(request), stage: '', accountId: '' };
      const { errors } = listQuery(filters, 1, BOARD_CARDS);
      const [stages, people] = await Promise.all([getDealStages(ctx.database.db, org), listPeople(ctx.database.db, org)]);
      const columns = errors.length ? [] : await boardColumns(deps, org, stages, { ...(filters.ownerId ? { ownerId: filters.ownerId } : {}), ...(filters.q ? { q: filters.q } : {}) });
      const problem = errors.length ? problemOf(validationFailed(errors)) : undefined;
      const back = href(BOARD_PATH, { q: filters.q, ownerId: filters.ownerId });
      const movedTo = stages.find((s) => s.key === queryText(request, 'to'));
      return deps.render(request, reply, {
        title: 'Deals board',
        crumbs: ['Data', 'Deals'],
        status: problem ? 400 : 200,
        notice: queryText(request, 'notice') === 'moved' && movedTo ? `Deal moved to ${movedTo.label}.` : undefined,
        body: html`${viewSwitch('board', filters)}<div class="toolbar">${dealFilterForm(BOARD_PATH, filters, { stages, people, problem, withStage: false })}<a class="button button--primary" href="${DEALS_PATH}/new">New deal</a></div>
${dealBoard(request, columns, filters, new Map(people.map((p) => [p.id, p.name])), back)}`,
      });
    });

    app.get('/data/deals/new', async (request, reply) => formPage(deps, request, reply, { values: { ...emptyDealForm(), accountId: queryText(request, 'accountId') }, custom: {} }));

    app.post('/data/deals', async (request, reply) => {
      const viewer = viewerOf(request);
      const values = readForm(formBody(request));
      const fields = await dealFields(deps, viewer.organization.id);
      const custom = readCustom(fields, formBody(request));
      try {
        const input = checkedItemBody<CreateDealBody>(CreateDealBody, 'deals', fields, 'create', { ...toBody(values), ...customBody({ fields, values: custom, timeZone: viewer.organization.timezone }) });
        const deal = await inTransaction(ctx, (trx) => createDeal(ctx, trx, callerOfViewer(viewer), input));
        return reply.redirect(`${DEALS_PATH}/${deal.id}?notice=created`, 303);
      } catch (err) {
        return formPage(deps, request, reply, { values, custom, problem: problemOf(err), status: 400 });
      }
    });

    app.get<{ Params: { id: string } }>('/data/deals/:id', async (request, reply) => detailPage(deps, request, reply, await getDeal(ctx, viewerOf(request).organization.id, request.params.id)));

    app.get<{ Params: { id: string } }>('/data/deals/:id/edit', async (request, reply) => {
      const viewer = viewerOf(request);
      const deal = await getDeal(ctx, viewer.organization.id, request.params.id);
      const custom = customFormValues(await dealFields(deps, viewer.organization.id), deal, viewer.organization.timezone);
      return formPage(deps, request, reply, { deal, version: ctx.entityTagger.tagOf(deal), values: dealFormValues(deal), custom });
    });

    app.post<{ Params: { id: string } }>('/data/deals/:id', async (request, reply) => {
      const viewer = viewerOf(request);
      const timeZone = viewer.organization.timezone;
      // As it is now: when the form's version is still current, this is the deal the form showed.
      const deal = await getDeal(ctx, viewer.organization.id, request.params.id);
      const body = formBody(request);
      const values = readForm(body);
      const fields = await dealFields(deps, viewer.organization.id);
      const custom = readCustom(fields, body);
      try {
        const changes = { ...toBody(values, dealFormValues(deal)), ...customBody({ fields, values: custom, timeZone }, deal) };
        if (Object.keys(changes).length === 0) return reply.redirect(`${DEALS_PATH}/${deal.id}?notice=unchanged`, 303);
        const patch = checkedItemBody<UpdateDealBody>(UpdateDealBody, 'deals', fields, 'update', changes);
        await inTransaction(ctx, (trx) => updateDeal(ctx, trx, callerOfViewer(viewer), deal.id, patch, { ifMatch: submittedVersion(body) }));
        return reply.redirect(`${DEALS_PATH}/${deal.id}?notice=saved`, 303);
      } catch (err) {
        const conflict = editConflict<Deal>(ctx, err, editedWithCustom('deal', DEAL_LABELS, dealFormValues, { fields, timeZone }), { ...values, ...custom });
        if (conflict) {
          const { item: current, version, problem } = conflict;
          return formPage(deps, request, reply, { deal: current, version, values: dealFormValues(current), custom: customFormValues(fields, current, timeZone), problem, status: 409 });
        }
        return formPage(deps, request, reply, { deal, version: submittedVersion(body), values, custom, problem: problemOf(err), status: 400 });
      }
    });

    // A card's (or the detail page's) move form; a refusal is shown next to the deal's own move form.
    app.post<{ Params: { id: string } }>('/data/deals/:id/stage', async (request, reply) => {
      const viewer = viewerOf(request);
      const deal = await getDeal(ctx, viewer.organization.id, request.params.id);
      const body = formBody(request);
      const stage = text(body, 'stage');
      try {
        const patch = checkedBody<UpdateDealBody>(UpdateDealBody, { stage });
        await inTransaction(ctx, (trx) => updateDeal(ctx, trx, callerOfViewer(viewer), deal.id, patch));
        return reply.redirect(withNotice(safeNext(text(body, 'back')), { notice: 'moved', to: stage }), 303);
      } catch (err) {
        const problem = problemOf(err);
        return detailPage(deps, request, reply, deal, { moveError: problem.fields.stage ?? problem.message ?? 'was not changed', status: 400 });
      }
    });

    registerConsoleTrash(app, deps, {
      route: '/data/deals',
      href: () => DEALS_PATH,
      title: async () => ({ title: 'Deals', crumbs: ['Data'] }),
      noun: 'deal',
      trash: async (viewer, _params, page) => {
        const { deals, pagination } = await listDeals(ctx, viewer.organization.id, { page, limit: DEFAULT_LIMIT, deleted: true });
        return { items: deals, pagination };
      },
      remove: (trx, caller, _params, id) => deleteDeal(ctx, trx, caller, id, false),
      restore: (trx, caller, _params, id) => restoreDeal(ctx, trx, caller, id),
      purge: (trx, caller, _params, id) => deleteDeal(ctx, trx, caller, id, true, { trashedOnly: true }),
    });
  },
};
