import type { FastifyReply, FastifyRequest } from 'fastify';
import { inTransaction } from '../../db/transaction.js';
import { validateValue } from '../../http/validation.js';
import { DEFAULT_LIMIT } from '../../lib/pagination.js';
import { CreateLeadBody, ListLeadsQuery, UpdateLeadBody, type Lead } from '../../modules/leads/leads.schemas.js';
import { createLead, deleteLead, getLead, listLeads, restoreLead, updateLead } from '../../modules/leads/leads.service.js';
import { deleteButton, registerConsoleTrash, trashLink } from './trash.pages.js';
import { defined, formBody, orNull, orUndefined, problemOf, queryPage, queryText, text, type FormBody, type FormProblem } from '../forms.js';
import { html } from '../html.js';
import { callerOfViewer, viewerOf, type AdminDeps, type AdminModule } from '../module.js';
import { consoleTimeline, listPeople, TIMELINE_NOTICES } from './detail.views.js';
import { emptyLeadForm, LEAD_LABELS, leadDetail, leadForm, leadFormValues, LEADS_PATH, leadsPager, leadsTable, leadSearchForm, type LeadFormValues } from './leads.views.js';
import { listControls, listControlsOf, listControlsQuery, rangeErrors } from '../list-controls.js';
import { listDeals } from '../../modules/deals/deals.service.js';
import { getDealStages } from '../../modules/deals/stages.service.js';
import { recordsPointingAt } from '../../modules/objects/related-records.js';
import { namesByIds, recentNames } from './names.store.js';
import { RELATED_LIMIT } from './records.views.js';
import { checkedItemBody, customBody, customFieldsFor, customFormValues, editedWithCustom, readCustom } from './custom-fields.views.js';
import { customShown, formRelations } from './relation-items.js';
import { changedOnly, editConflict, submittedVersion } from './edit-version.js';

/** Newest accounts the lead form's account picker offers. */
const PICKER_SIZE = 50;

const NOTICES: Record<string, string> = { created: 'Lead created.', saved: 'Changes saved.', unchanged: 'Nothing was changed.', ...TIMELINE_NOTICES };

function readForm(body: FormBody): LeadFormValues {
  const values = emptyLeadForm();
  for (const key of Object.keys(LEAD_LABELS) as (keyof LeadFormValues)[]) values[key] = text(body, key);
  return values;
}

const leadFields = (deps: AdminDeps, organizationId: string) => customFieldsFor(deps, organizationId, 'leads');

/**
 * The same body the API would receive: blank inputs are left out on create; an edit sends only the inputs changed
 * from the version the form showed (`before`), a blank one clearing the field — so an unchanged owner who has since
 * been deactivated isn't re-sent, and a field the form didn't touch can't be reverted.
 */
function toBody(v: LeadFormValues, before?: LeadFormValues): Record<string, unknown> {
  const blank = before ? orNull : orUndefined;
  const body: Record<string, unknown> = { name: v.name, status: v.status };
  for (const key of ['email', 'phoneNumber', 'company', 'title', 'source', 'sourceCampaign', 'ownerId', 'accountId', 'notes'] as const) body[key] = blank(v[key]);
  return defined(before ? changedOnly(body, v, before) : body);
}

const owners = (deps: AdminDeps, organizationId: string) => listPeople(deps.ctx.database.db, organizationId);

async function formPage(
  deps: AdminDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  opts: { leadId?: string; leadName?: string; version?: string; values: LeadFormValues; custom: Record<string, string>; problem?: FormProblem; status?: number },
) {
  const viewer = viewerOf(request);
  const creating = opts.leadId === undefined;
  const db = deps.ctx.database.db;
  const org = viewer.organization.id;
  const [users, accounts, accountNames, fields] = await Promise.all([
    owners(deps, org),
    recentNames(db, 'accounts', org, PICKER_SIZE),
    namesByIds(db, 'accounts', org, [opts.values.accountId || null]),
    leadFields(deps, org),
  ]);
  const relations = await formRelations(deps.ctx, viewer.organization, fields, opts.custom);
  return deps.render(request, reply, {
    title: creating ? 'New lead' : `Edit ${opts.leadName}`,
    crumbs: ['Data', 'Leads'],
    status: opts.status,
    body: leadForm(request, {
      action: creating ? LEADS_PATH : `${LEADS_PATH}/${opts.leadId}`,
      values: opts.values,
      problem: opts.problem,
      users,
      accounts,
      accountName: accountNames.get(opts.values.accountId),
      creating,
      custom: { fields, values: opts.custom, timeZone: viewer.organization.timezone, relations },
      version: opts.version,
    }),
  });
}

/** Data › Leads: the searchable table (same `q` as GET /leads), detail with history, create and edit forms. */
export const leadsModule: AdminModule = {
  name: 'leads',
  nav: [{ section: 'data', label: 'Leads', href: LEADS_PATH, order: 10, description: 'People who may become customers.' }],
  objectPages: { lead: LEADS_PATH },
  register(app, deps) {
    const { ctx } = deps;

    app.get('/data/leads', async (request, reply) => {
      const viewer = viewerOf(request);
      const q = queryText(request, 'q').trim();
      const controls = listControlsOf(request);
      const query = { ...(q ? { q } : {}), ...listControlsQuery(controls), page: queryPage(request), limit: DEFAULT_LIMIT };
      const errors = [...validateValue(ListLeadsQuery, query, 'query'), ...rangeErrors(controls)];
      const [result, users, fields] = await Promise.all([
        errors.length ? undefined : listLeads(ctx, viewer.organization.id, query),
        owners(deps, viewer.organization.id),
        leadFields(deps, viewer.organization.id),
      ]);
      const qError = errors.find((e) => e.field === 'q')?.message;
      const custom = await customShown(ctx, viewer.organization, fields, result?.leads ?? []);
      return deps.render(request, reply, {
        title: 'Leads',
        crumbs: ['Data'],
        status: errors.length ? 400 : 200,
        body: html`<div class="toolbar">${leadSearchForm(q, qError, listControls(controls, errors), controls)}<a class="button button--primary" href="${LEADS_PATH}/new">New lead</a>${trashLink(LEADS_PATH)}</div>
${result ? html`${leadsTable(result.leads, new Map(users.map((u) => [u.id, u.name])), viewer.organization.timezone, custom)}${leadsPager(q, result.pagination, controls)}` : ''}`,
      });
    });

    app.get('/data/leads/new', async (request, reply) => formPage(deps, request, reply, { values: emptyLeadForm(), custom: {} }));

    app.post('/data/leads', async (request, reply) => {
      const viewer = viewerOf(request);
      const values = readForm(formBody(request));
      const fields = await leadFields(deps, viewer.organization.id);
      const custom = readCustom(fields, formBody(request));
      try {
        const input = checkedItemBody<CreateLeadBody>(CreateLeadBody, 'leads', fields, 'create', { ...toBody(values), ...customBody({ fields, values: custom, timeZone: viewer.organization.timezone }) });
        const lead = await inTransaction(ctx, (trx) => createLead(ctx, trx, callerOfViewer(viewer), input));
        return reply.redirect(`${LEADS_PATH}/${lead.id}?notice=created`, 303);
      } catch (err) {
        return formPage(deps, request, reply, { values, custom, problem: problemOf(err), status: 400 });
      }
    });

    app.get<{ Params: { id: string } }>('/data/leads/:id', async (request, reply) => {
      const viewer = viewerOf(request);
      const org = viewer.organization.id;
      const lead = await getLead(ctx, org, request.params.id);
      const [users, history, duplicate, accountNames, deals, stages, pointing, fields] = await Promise.all([
        owners(deps, org),
        consoleTimeline(deps, request, org, { object: 'lead', id: lead.id }),
        lead.duplicateOf ? getLead(ctx, org, lead.duplicateOf).catch(() => undefined) : undefined,
        namesByIds(ctx.database.db, 'accounts', org, [lead.accountId]),
        listDeals(ctx, org, { leadId: lead.id, page: 1, limit: RELATED_LIMIT }),
        getDealStages(ctx.database.db, org),
        recordsPointingAt(ctx, viewer.organization, 'leads', lead.id, RELATED_LIMIT),
        leadFields(deps, org),
      ]);
      const custom = await customShown(ctx, viewer.organization, fields, [lead]);
      const related = {
        accountName: lead.accountId ? accountNames.get(lead.accountId) : undefined,
        deals: { deals: deals.deals, total: deals.pagination.total ?? 0 },
        stageLabels: new Map(stages.map((s) => [s.key, s.label])),
        pointing,
      };
      return deps.render(request, reply, {
        title: lead.name,
        crumbs: ['Data', 'Leads'],
        status: history.error ? 400 : undefined,
        notice: NOTICES[queryText(request, 'notice')],
        body: leadDetail(lead, users.find((u) => u.id === lead.ownerId)?.name, duplicate?.name, history, viewer.organization.timezone, related, custom, deleteButton(request, LEADS_PATH, lead.id, lead.name)),
      });
    });

    app.get<{ Params: { id: string } }>('/data/leads/:id/edit', async (request, reply) => {
      const viewer = viewerOf(request);
      const lead = await getLead(ctx, viewer.organization.id, request.params.id);
      const custom = customFormValues(await leadFields(deps, viewer.organization.id), lead, viewer.organization.timezone);
      return formPage(deps, request, reply, { leadId: lead.id, leadName: lead.name, version: ctx.entityTagger.tagOf(lead), values: leadFormValues(lead), custom });
    });

    app.post<{ Params: { id: string } }>('/data/leads/:id', async (request, reply) => {
      const viewer = viewerOf(request);
      const timeZone = viewer.organization.timezone;
      // As it is now: when the form's version is still current, this is the lead the form showed.
      const lead = await getLead(ctx, viewer.organization.id, request.params.id);
      const body = formBody(request);
      const values = readForm(body);
      const fields = await leadFields(deps, viewer.organization.id);
      const custom = readCustom(fields, body);
      try {
        const changes = { ...toBody(values, leadFormValues(lead)), ...customBody({ fields, values: custom, timeZone }, lead) };
        if (Object.keys(changes).length === 0) return reply.redirect(`${LEADS_PATH}/${lead.id}?notice=unchanged`, 303);
        const patch = checkedItemBody<UpdateLeadBody>(UpdateLeadBody, 'leads', fields, 'update', changes);
        await inTransaction(ctx, (trx) => updateLead(ctx, trx, callerOfViewer(viewer), lead.id, patch, { ifMatch: submittedVersion(body) }));
        return reply.redirect(`${LEADS_PATH}/${lead.id}?notice=saved`, 303);
      } catch (err) {
        const conflict = editConflict<Lead>(ctx, err, editedWithCustom('lead', LEAD_LABELS, leadFormValues, { fields, timeZone }), { ...values, ...custom });
        if (conflict) {
          const { item: current, version, problem } = conflict;
          return formPage(deps, request, reply, { leadId: current.id, leadName: current.name, version, values: leadFormValues(current), custom: customFormValues(fields, current, timeZone), problem, status: 409 });
        }
        return formPage(deps, request, reply, { leadId: lead.id, leadName: lead.name, version: submittedVersion(body), values, custom, problem: problemOf(err), status: 400 });
      }
    });

    registerConsoleTrash(app, deps, {
      route: '/data/leads',
      href: () => LEADS_PATH,
      title: async () => ({ title: 'Leads', crumbs: ['Data'] }),
      noun: 'lead',
      trash: async (viewer, _params, page) => {
        const { leads, pagination } = await listLeads(ctx, viewer.organization.id, { page, limit: DEFAULT_LIMIT, deleted: true });
        return { items: leads, pagination };
      },
      remove: (trx, caller, _params, id) => deleteLead(ctx, trx, caller, id, false),
      restore: (trx, caller, _params, id) => restoreLead(ctx, trx, caller, id),
      purge: (trx, caller, _params, id) => deleteLead(ctx, trx, caller, id, true, { trashedOnly: true }),
    });
  },
};
