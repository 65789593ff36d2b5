import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { inTransaction } from '../../db/transaction.js';
import { validationFailed } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import { localDate } from '../../lib/dates.js';
import { DEFAULT_LIMIT } from '../../lib/pagination.js';
import { BUILTIN_RESOURCES } from '../../modules/fields/builtin-resources.js';
import type { CustomObject } from '../../modules/objects/objects.schemas.js';
import { getObject } from '../../modules/objects/objects.service.js';
import { ListRecordsQuery } from '../../modules/objects/records.schemas.js';
import { createRecord, deleteRecord, getRecord, listRecords, restoreRecord, updateRecord, type RecordView } from '../../modules/objects/records.service.js';
import { deleteButton, registerConsoleTrash, trashLink } from './trash.pages.js';
import { pageNotFound } from '../errors.js';
import { defined, formBody, problemOf, queryPage, queryText, text, type FormProblem } from '../forms.js';
import { listControlsOf, listControlsQuery, rangeErrors } from '../list-controls.js';
import { html } from '../html.js';
import { callerOfViewer, viewerOf, type AdminDeps, type AdminModule } from '../module.js';
import { objectNames } from './names.store.js';
import { builtInPage, RECORDS_PATH } from './objects.views.js';
import { consoleTimeline, TIMELINE_NOTICES } from './detail.views.js';
import { formValues, recordBody, submittedText } from './record-values.js';
import { editConflict, submittedVersion, type EditedItem } from './edit-version.js';
import { recordsPointingAt } from '../../modules/objects/related-records.js';
import { formRelations, relatedItems } from './relation-items.js';
import { RELATED_LIMIT, recordDetail, recordFilterForm, recordForm, recordsPager, recordsPath, recordsTable, recordTitle, type RecordFilters } from './records.views.js';

const NOTICES: Record<string, string> = { created: 'Record created.', saved: 'Changes saved.', unchanged: 'Nothing was changed.', ...TIMELINE_NOTICES };
/** Custom objects listed under Data; more are reached from Configuration › Custom objects. */
const NAV_OBJECTS = 30;

type Params = { slug: string };
type RecordParams = { slug: string; id: string };

function readFilters(request: FastifyRequest): RecordFilters {
  return { q: queryText(request, 'q').trim(), stage: queryText(request, 'stage'), overdue: queryText(request, 'overdue') === 'true' };
}

/** The submitted values of the object's fields, by key (the form's input names). */
function submitted(o: CustomObject, request: FastifyRequest): { values: Record<string, string>; stage: string } {
  const body = formBody(request);
  return { values: Object.fromEntries(o.fields.map((f) => [f.key, submittedText(body, f)])), stage: text(body, 'stage') };
}

/** A record as its edit form shows it: the fields' text, and the stage when the object has stages. */
function editedRecord(o: CustomObject, timeZone: string): EditedItem<RecordView> {
  const staged = o.stages.length > 0;
  return {
    key: 'record',
    noun: 'record',
    labels: { stage: 'Stage', ...Object.fromEntries(o.fields.map((f) => [f.key, f.label])) },
    formOf: (record) => ({ ...formValues(o.fields, record, timeZone), ...(staged ? { stage: record.stage ?? '' } : {}) }),
  };
}

async function formPage(
  deps: AdminDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  o: CustomObject,
  opts: { record?: RecordView; version?: string; values: Record<string, string>; stage: string; problem?: FormProblem; status?: number },
) {
  const base = recordsPath(o.slug);
  const organization = viewerOf(request).organization;
  const relations = await formRelations(deps.ctx, organization, o.fields, opts.values);
  return deps.render(request, reply, {
    title: opts.record ? `Edit ${recordTitle(o, opts.record)}` : `New ${o.name} record`,
    crumbs: ['Data', o.name],
    status: opts.status,
    body: recordForm(request, o, {
      action: opts.record ? `${base}/${opts.record.id}` : base,
      values: opts.values,
      stage: opts.stage,
      problem: opts.problem,
      creating: !opts.record,
      timeZone: viewerOf(request).organization.timezone,
      cancel: opts.record ? `${base}/${opts.record.id}` : base,
      relations,
      version: opts.version,
    }),
  });
}

/**
 * GET /objects lists leads, accounts and deals with the custom objects, but their pages are their own: a records
 * address under one of their slugs leads there (a page redirects; a form posted to one is 404) rather than to a
 * records page whose form can't save them. Static paths, so they win over `:slug` here.
 */
function registerBuiltInRedirects(app: FastifyInstance): void {
  for (const slug of BUILTIN_RESOURCES) {
    for (const path of [`/data/objects/${slug}`, `/data/objects/${slug}/*`]) {
      app.get<{ Params: { '*'?: string } }>(path, async (request, reply) => {
        const rest = request.params['*'] ? `/${request.params['*'].split('/').map(encodeURIComponent).join('/')}` : '';
        const query = request.url.indexOf('?');
        return reply.redirect(`${builtInPage(slug)}${rest}${query === -1 ? '' : request.url.slice(query)}`);
      });
      app.post(path, async () => {
        throw pageNotFound();
      });
    }
  }
}

/** Data › <object>: each custom object's records, with `q`, `stage` and `overdue` as in the API, detail and forms from the definition. */
export const recordsModule: AdminModule = {
  name: 'records',
  nav: [],
  objectPages: { record: (id, slug) => (slug ? `${recordsPath(slug)}/${id}` : undefined) },
  async navFor(deps, viewer) {
    const objects = await objectNames(deps.ctx.database.db, viewer.organization.id, NAV_OBJECTS);
    return objects.map((o, i) => ({ section: 'data' as const, label: o.name, href: `${RECORDS_PATH}/${o.slug}`, order: 100 + i, description: `Records of the custom object ${o.name}.` }));
  },
  register(app, deps) {
    const { ctx } = deps;
    registerBuiltInRedirects(app);

    app.get<{ Params: Params }>('/data/objects/:slug', async (request, reply) => {
      const viewer = viewerOf(request);
      const org = viewer.organization;
      const o = await getObject(ctx, org.id, request.params.slug);
      const filters = readFilters(request);
      const controls = listControlsOf(request);
      const query = defined({ q: filters.q || undefined, stage: filters.stage || undefined, overdue: filters.overdue || undefined, ...listControlsQuery(controls), page: queryPage(request), limit: DEFAULT_LIMIT });
      let problem: FormProblem | undefined;
      let result: Awaited<ReturnType<typeof listRecords>> | undefined;
      try {
        const errors = [...validateValue(ListRecordsQuery, query, 'query'), ...rangeErrors(controls)];
        if (errors.length) throw validationFailed(errors);
        result = await listRecords(ctx, org, o.slug, query as ListRecordsQuery);
      } catch (err) {
        problem = problemOf(err);
      }
      const today = localDate(ctx.clock.now(), org.timezone);
      const related = result ? await relatedItems(ctx, org, o.fields, result.records) : new Map();
      return deps.render(request, reply, {
        title: o.name,
        crumbs: ['Data'],
        status: problem ? 400 : 200,
        body: html`<div class="toolbar">${recordFilterForm(o, filters, problem, controls)}<a class="button button--primary" href="${recordsPath(o.slug)}/new">New record</a>${trashLink(recordsPath(o.slug))}</div>
${result ? html`${recordsTable(o, result.records, { timeZone: org.timezone, today, relations: { related } })}${recordsPager(o, filters, result.pagination, controls)}` : ''}`,
      });
    });

    app.get<{ Params: Params }>('/data/objects/:slug/new', async (request, reply) => {
      const o = await getObject(ctx, viewerOf(request).organization.id, request.params.slug);
      return formPage(deps, request, reply, o, { values: {}, stage: '' });
    });

    app.post<{ Params: Params }>('/data/objects/:slug', async (request, reply) => {
      const viewer = viewerOf(request);
      const o = await getObject(ctx, viewer.organization.id, request.params.slug);
      const form = submitted(o, request);
      try {
        const input = { ...recordBody(o.fields, form.values, { timeZone: viewer.organization.timezone }), ...(o.stages.length && form.stage ? { stage: form.stage } : {}) };
        const record = await inTransaction(ctx, (trx) => createRecord(ctx, trx, callerOfViewer(viewer), o.slug, input));
        return reply.redirect(`${recordsPath(o.slug)}/${record.id}?notice=created`, 303);
      } catch (err) {
        return formPage(deps, request, reply, o, { ...form, problem: problemOf(err), status: 400 });
      }
    });

    app.get<{ Params: RecordParams }>('/data/objects/:slug/:id', async (request, reply) => {
      const viewer = viewerOf(request);
      const org = viewer.organization;
      const o = await getObject(ctx, org.id, request.params.slug);
      const record = await getRecord(ctx, org.id, o.slug, request.params.id);
      const [history, related, pointing] = await Promise.all([
        consoleTimeline(deps, request, org.id, { object: 'record', id: record.id, objectSlug: o.slug }),
        relatedItems(ctx, org, o.fields, [record]),
        recordsPointingAt(ctx, org, o.slug, record.id, RELATED_LIMIT),
      ]);
      return deps.render(request, reply, {
        title: recordTitle(o, record),
        crumbs: ['Data', o.name],
        status: history.error ? 400 : undefined,
        notice: NOTICES[queryText(request, 'notice')],
        body: recordDetail(o, record, { history, timeZone: org.timezone, isAdmin: viewer.user.isAdmin, relations: { related }, pointing, remove: deleteButton(request, recordsPath(o.slug), record.id, recordTitle(o, record)) }),
      });
    });

    app.get<{ Params: RecordParams }>('/data/objects/:slug/:id/edit', async (request, reply) => {
      const org = viewerOf(request).organization;
      const o = await getObject(ctx, org.id, request.params.slug);
      const record = await getRecord(ctx, org.id, o.slug, request.params.id);
      return formPage(deps, request, reply, o, { record, version: ctx.entityTagger.tagOf(record), values: formValues(o.fields, record, org.timezone), stage: record.stage ?? '' });
    });

    app.post<{ Params: RecordParams }>('/data/objects/:slug/:id', async (request, reply) => {
      const viewer = viewerOf(request);
      const tz = viewer.organization.timezone;
      const o = await getObject(ctx, viewer.organization.id, request.params.slug);
      // As it is now: when the form's version is still current, this is the record the form showed (edit-version.ts).
      const record = await getRecord(ctx, viewer.organization.id, o.slug, request.params.id);
      const form = submitted(o, request);
      const version = submittedVersion(formBody(request));
      try {
        const patch = { ...recordBody(o.fields, form.values, { timeZone: tz, before: formValues(o.fields, record, tz) }), ...(o.stages.length && form.stage !== record.stage ? { stage: form.stage } : {}) };
        if (Object.keys(patch).length === 0) return reply.redirect(`${recordsPath(o.slug)}/${record.id}?notice=unchanged`, 303);
        await inTransaction(ctx, (trx) => updateRecord(ctx, trx, callerOfViewer(viewer), o.slug, record.id, patch, { ifMatch: version }));
        return reply.redirect(`${recordsPath(o.slug)}/${record.id}?notice=saved`, 303);
      } catch (err) {
        const conflict = editConflict(ctx, err, editedRecord(o, tz), { ...form.values, ...(o.stages.length ? { stage: form.stage } : {}) });
        if (conflict) {
          const current = conflict.item;
          return formPage(deps, request, reply, o, { record: current, version: conflict.version, values: formValues(o.fields, current, tz), stage: current.stage ?? '', problem: conflict.problem, status: 409 });
        }
        return formPage(deps, request, reply, o, { record, version, ...form, problem: problemOf(err), status: 400 });
      }
    });

    registerConsoleTrash(app, deps, {
      route: '/data/objects/:slug',
      href: (params) => recordsPath(params.slug!),
      title: async (viewer, params) => ({ title: (await getObject(ctx, viewer.organization.id, params.slug!)).name, crumbs: ['Data'] }),
      noun: 'record',
      trash: async (viewer, params, page) => {
        const o = await getObject(ctx, viewer.organization.id, params.slug!);
        const { records, pagination } = await listRecords(ctx, viewer.organization, o.slug, { page, limit: DEFAULT_LIMIT, deleted: true });
        return { items: records.map((r) => ({ id: r.id, name: recordTitle(o, r), deletedAt: r.deletedAt })), pagination };
      },
      remove: (trx, caller, params, id) => deleteRecord(ctx, trx, caller, params.slug!, id, false),
      restore: (trx, caller, params, id) => restoreRecord(ctx, trx, caller, params.slug!, id),
      purge: (trx, caller, params, id) => deleteRecord(ctx, trx, caller, params.slug!, id, true, { trashedOnly: true }),
    });
  },
};
