import type { FastifyReply, FastifyRequest } from 'fastify';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { CreateObjectBody, MAX_FIELDS, MAX_STAGES, UpdateObjectBody, type CustomObject, type FieldDefinition } from '../../modules/objects/objects.schemas.js';
import { createObject, getObject, listObjects, updateObject } from '../../modules/objects/objects.service.js';
import { checkedBody, formBody, queryPage, queryText, text, type FormBody, type FormProblem } from '../forms.js';
import { pager } from '../components.js';
import { html } from '../html.js';
import { viewerOf, type AdminDeps, type AdminModule } from '../module.js';
import { filledRows, readRows, rowAction, rowProblem, withBlankRows } from '../rows.js';
import { definitionPath, definitionTables, draftOf, draftText, FIELD_KEYS, itemsApiPath, itemsPage, objectForm, OBJECTS_PATH, objectsTable, STAGE_KEYS, type ObjectDraft } from './objects.views.js';
import { editConflict, submittedVersion, type EditedItem } from './edit-version.js';

const ADMIN = { console: { access: 'admin' as const } };
const NOTICES: Record<string, string> = { created: 'Object defined. Its records are under Data.', saved: 'Definition saved.' };
const BLANK_FIELDS = 3;
const BLANK_STAGES = 2;
const FIELD_DEFAULTS = { type: 'text' };

function readDraft(body: FormBody): ObjectDraft {
  return {
    slug: text(body, 'slug').trim(),
    name: text(body, 'name'),
    fields: readRows(body, 'fields', FIELD_KEYS, MAX_FIELDS + 30),
    stages: readRows(body, 'stages', STAGE_KEYS, MAX_STAGES + 20),
  };
}

/** The filled rows as the API's definition (options one per line; blank rows left out), and where each row was. */
function toDefinition(draft: ObjectDraft) {
  const fields = filledRows(draft.fields, ['key', 'label']);
  const stages = filledRows(draft.stages, ['key', 'label']);
  const field = ({ row }: (typeof fields)[number]): FieldDefinition => {
    const options = row.options.split(/\r?\n/).map((o) => o.trim()).filter((o) => o !== '');
    return {
      key: row.key.trim(),
      label: row.label,
      type: row.type as FieldDefinition['type'],
      required: row.required === 'on',
      ...(options.length ? { options } : {}),
      ...(row.target.trim() !== '' ? { target: row.target.trim() } : {}),
      ...(row.role === 'due' ? { role: 'due' as const } : {}),
    };
  };
  return {
    body: { fields: fields.map(field), stages: stages.map(({ row }) => ({ key: row.key.trim(), label: row.label })) },
    positions: { fields: fields.map((r) => r.at), stages: stages.map((r) => r.at) },
  };
}

/** "Add more rows" re-renders the draft with more blank rows instead of saving it. */
function withMoreRows(draft: ObjectDraft, list: string): ObjectDraft {
  if (list === 'fields') return { ...draft, fields: withBlankRows(draft.fields, FIELD_KEYS, BLANK_FIELDS, FIELD_DEFAULTS) };
  if (list === 'stages') return { ...draft, stages: withBlankRows(draft.stages, STAGE_KEYS, BLANK_STAGES) };
  return draft;
}

function problemOf(err: unknown, positions: Record<string, number[]>, slug: string): FormProblem {
  if (err instanceof AppError && err.code === 'CONFLICT') return { fields: { slug: `"${slug}" is already used by another object` } };
  return rowProblem(err, positions);
}

/** An object's definition as its form shows it: its rows, then blank ones to add more. */
const editableDraft = (o: CustomObject): ObjectDraft => {
  const draft = draftOf(o);
  return { ...draft, fields: withBlankRows(draft.fields, FIELD_KEYS, BLANK_FIELDS, FIELD_DEFAULTS), stages: withBlankRows(draft.stages, STAGE_KEYS, BLANK_STAGES) };
};

/** The rows are quoted whole (draftText names them), so no labels are needed. */
const EDITED_DEFINITION: EditedItem<CustomObject> = { key: 'object', noun: 'definition', labels: {}, formOf: (o) => draftText(draftOf(o)) };

/** The create form, or an object's definition form saved against `version`. */
async function formPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, opts: { slug?: string; version?: string | undefined; draft: ObjectDraft; problem?: FormProblem; status?: number }) {
  const creating = opts.slug === undefined;
  const current = creating ? undefined : await getObject(deps.ctx, viewerOf(request).organization.id, opts.slug!);
  return deps.render(request, reply, {
    title: current ? current.name : 'Define an object',
    crumbs: ['Configuration', 'Custom objects'],
    status: opts.status,
    notice: NOTICES[queryText(request, 'notice')],
    body: html`${current ? html`<p class="button-row"><a class="button button--secondary" href="${itemsPage(current)}">Records of ${current.name}</a></p>
<p class="muted">Slug <code>${current.slug}</code> · records at <code>${itemsApiPath(current)}</code></p>
${definitionTables(current)}<section class="panel" aria-labelledby="edit-definition"><h2 id="edit-definition">Change the definition</h2>` : ''}
${objectForm(request, { action: creating ? OBJECTS_PATH : definitionPath(opts.slug!), draft: opts.draft, problem: opts.problem, creating, builtIn: current?.builtIn ?? false, version: opts.version })}${current ? html`</section>` : ''}`,
  });
}

const blankDraft = (): ObjectDraft => ({ slug: '', name: '', fields: withBlankRows([], FIELD_KEYS, BLANK_FIELDS, FIELD_DEFAULTS), stages: withBlankRows([], STAGE_KEYS, BLANK_STAGES) });

/** Configuration › Custom objects: list, define (slug, name, fields, stages), and later add fields and stages. */
export const objectsModule: AdminModule = {
  name: 'objects',
  nav: [{ section: 'configuration', label: 'Custom objects', href: OBJECTS_PATH, order: 24, description: 'Your own kinds of records: fields, due dates and stages.' }],
  register(app, deps) {
    const { ctx } = deps;

    app.get('/config/objects', async (request, reply) => {
      const viewer = viewerOf(request);
      const { objects, pagination } = await listObjects(ctx, viewer.organization.id, { page: queryPage(request), limit: 25 });
      return deps.render(request, reply, {
        title: 'Custom objects',
        crumbs: ['Configuration'],
        body: html`<p>Your own kinds of records (projects, tickets, contracts…), each with its fields and optional stages. Their records are under Data and in the API.</p>
${viewer.user.isAdmin ? html`<p><a class="button button--primary" href="${OBJECTS_PATH}/new">Define an object</a></p>` : html`<p class="muted">Only administrators can define objects or change them.</p>`}
${objectsTable(objects, viewer.organization.timezone, viewer.user.isAdmin)}${pager(OBJECTS_PATH, {}, pagination)}`,
      });
    });

    app.get('/config/objects/new', { config: ADMIN }, async (request, reply) => formPage(deps, request, reply, { draft: blankDraft() }));

    app.post('/config/objects', { config: ADMIN }, async (request, reply) => {
      const body = formBody(request);
      const draft = readDraft(body);
      const action = rowAction(body);
      if (action.kind !== 'save') return formPage(deps, request, reply, { draft: action.kind === 'more' ? withMoreRows(draft, action.list) : draft });
      const { body: definition, positions } = toDefinition(draft);
      try {
        const input = checkedBody<CreateObjectBody>(CreateObjectBody, { slug: draft.slug, name: draft.name, ...definition });
        const object = await inTransaction(ctx, (trx) => createObject(ctx, trx, viewerOf(request).organization.id, input));
        return reply.redirect(`${definitionPath(object.slug)}?notice=created`, 303);
      } catch (err) {
        return formPage(deps, request, reply, { draft, problem: problemOf(err, positions, draft.slug), status: 400 });
      }
    });

    app.get<{ Params: { slug: string } }>('/config/objects/:slug/definition', async (request, reply) => {
      const viewer = viewerOf(request);
      const object = await getObject(ctx, viewer.organization.id, request.params.slug);
      if (!viewer.user.isAdmin) {
        return deps.render(request, reply, {
          title: object.name,
          crumbs: ['Configuration', 'Custom objects'],
          body: html`<p class="button-row"><a class="button button--secondary" href="${itemsPage(object)}">Records of ${object.name}</a></p>${definitionTables(object)}<p class="muted">Only administrators can change the definition.</p>`,
        });
      }
      return formPage(deps, request, reply, { slug: object.slug, version: ctx.entityTagger.tagOf(object), draft: editableDraft(object) });
    });

    app.post<{ Params: { slug: string } }>('/config/objects/:slug/definition', { config: ADMIN }, async (request, reply) => {
      const org = viewerOf(request).organization.id;
      const object = await getObject(ctx, org, request.params.slug);
      const body = formBody(request);
      const draft = { ...readDraft(body), slug: object.slug };
      const version = submittedVersion(body);
      const action = rowAction(body);
      if (action.kind !== 'save') return formPage(deps, request, reply, { slug: object.slug, version, draft: action.kind === 'more' ? withMoreRows(draft, action.list) : draft });
      const { body: definition, positions } = toDefinition(draft);
      try {
        const patch = checkedBody<UpdateObjectBody>(UpdateObjectBody, { name: draft.name, ...definition });
        await inTransaction(ctx, (trx) => updateObject(ctx, trx, org, object.slug, patch, { ifMatch: version }));
        // As PATCH /objects/{slug}: every instance's definition cache has dropped the old one before the redirect.
        await ctx.database.changesSeen?.();
        return reply.redirect(`${definitionPath(object.slug)}?notice=saved`, 303);
      } catch (err) {
        const conflict = editConflict(ctx, err, EDITED_DEFINITION, draftText(draft));
        if (conflict) return formPage(deps, request, reply, { slug: object.slug, version: conflict.version, draft: editableDraft(conflict.item), problem: conflict.problem, status: 409 });
        return formPage(deps, request, reply, { slug: object.slug, version, draft, problem: problemOf(err, positions, draft.slug), status: 400 });
      }
    });
  },
};
