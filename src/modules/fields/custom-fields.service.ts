import type { AppContext } from '../../context.js';
import type { Database, Executor } from '../../db/database.js';
import { validationFailed, type FieldError } from '../../errors.js';
import { KeyLookupCache } from '../orgs/key-lookup-cache.js';
import { definitionErrors, diffDefinitions, normalizeField, type Definition, type Field } from '../objects/definition.js';
import type { CustomObject, UpdatedFieldDefinition, UpdateObjectBody } from '../objects/objects.schemas.js';
import { checkCondition, type WriteOptions } from '../shared/precondition.js';
import type { OpenFieldCheck } from '../shared/batch.service.js';
import { BUILTIN, BUILTIN_RESOURCES, type BuiltinResource } from './builtin-resources.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addFieldErrors } from '../../http/extra-field-errors.js';
import { checkCustomInput, type CustomColumns, type CustomFields } from './custom-values.js';
import { isContactField } from '../objects/field-values.js';
import { recordFilters, type FieldFilter } from '../objects/record-filters.js';
import { definitionTargetErrors } from '../objects/relation-targets.js';
import { builtinDefinitions, customFieldHasData, customFieldHasGaps, customOptionsInUse, lockBuiltinDefinition, saveBuiltinDefinition, type StoredBuiltinDefinition } from './custom-fields.store.js';

type Ctx = Pick<AppContext, 'database' | 'clock'>;
/** Each resource's stored definition, and the CustomFields made of it once, which every request then shares. */
type Definitions = Record<BuiltinResource, StoredBuiltinDefinition & { custom: CustomFields }>;

const EPOCH = new Date(0).toISOString();
const empty = (resource: BuiltinResource): StoredBuiltinDefinition => ({ resource, definition: { fields: [], stages: [] }, createdAt: EPOCH, updatedAt: EPOCH });

/**
 * Per database handle, the organizations' definitions, kept while the database's change counter stands still
 * (the key lookup cache's rule: on SQLite the cache_version row, migration 0025; on PostgreSQL the notification a definition change
 * sends, migration 0019). A request reads its organization's definitions from here, not from the database.
 */
const caches = new WeakMap<Database, KeyLookupCache<Definitions>>();

async function loadDefinitions(db: Executor, organizationId: string): Promise<Definitions> {
  const found = new Map((await builtinDefinitions(db, organizationId)).map((d) => [d.resource, d]));
  return Object.fromEntries(
    BUILTIN_RESOURCES.map((resource) => {
      const stored = found.get(resource) ?? empty(resource);
      return [resource, { ...stored, custom: { resource, organizationId, definition: stored.definition } }];
    }),
  ) as Definitions;
}

function cacheOf(database: Database): KeyLookupCache<Definitions> {
  let cache = caches.get(database);
  if (!cache) caches.set(database, (cache = new KeyLookupCache<Definitions>(database)));
  return cache;
}

/** `db`: the caller's transaction when there is one (SQLite's one connection is taken by it meanwhile). */
async function definitionsOf(ctx: Pick<Ctx, 'database'>, db: Executor, organizationId: string): Promise<Definitions> {
  return (await cacheOf(ctx.database).lookup(organizationId, () => loadDefinitions(db, organizationId)))!;
}

/**
 * The custom fields of a resource of the organization (an empty definition when it has none). On every read and
 * write of a lead, account or deal: a cached organization is answered without the lookup's chain of promises.
 */
export function customFieldsOf(ctx: Pick<Ctx, 'database'>, db: Executor, organizationId: string, resource: BuiltinResource): Promise<CustomFields> {
  const cached = cacheOf(ctx.database).peek(organizationId);
  return cached ? Promise.resolve(cached[resource].custom) : definitionsOf(ctx, db, organizationId).then((d) => d[resource].custom);
}

/** What `crm import` checks a resource's custom columns with: the organization's fields and the standard keys. */
export async function customColumnsOf(ctx: Pick<Ctx, 'database'>, organizationId: string, resource: BuiltinResource): Promise<CustomColumns> {
  const shape = BUILTIN[resource];
  return { definition: (await customFieldsOf(ctx, ctx.database.db, organizationId, resource)).definition, writable: [...shape.writable], readOnly: [...shape.readOnly] };
}

/** Every built-in resource's custom field definition (the per-organization OpenAPI document). */
export async function builtinDefinitionsOf(ctx: Pick<Ctx, 'database'>, organizationId: string): Promise<Record<BuiltinResource, Definition>> {
  const definitions = await definitionsOf(ctx, ctx.database.db, organizationId);
  return Object.fromEntries(BUILTIN_RESOURCES.map((r) => [r, definitions[r].definition])) as Record<BuiltinResource, Definition>;
}

/** The keys of the organization's custom e-mail and phone fields of leads, accounts and deals (erasure and export find items by them). */
export async function customContactKeysOf(ctx: Pick<Ctx, 'database'>, db: Executor, organizationId: string): Promise<Record<BuiltinResource, string[]>> {
  const definitions = await definitionsOf(ctx, db, organizationId);
  const keys = (r: BuiltinResource) => definitions[r].definition.fields.filter(isContactField).map((f) => f.key);
  return { leads: keys('leads'), accounts: keys('accounts'), deals: keys('deals') };
}

/** The custom fields of a resource and the `filter[…]` parameters of a list query checked against them (contract §8). */
export async function customListOf(ctx: Pick<AppContext, 'database' | 'blindIndex'>, organizationId: string, resource: BuiltinResource, query: object): Promise<{ custom: CustomFields; filters: FieldFilter[] }> {
  const custom = await customFieldsOf(ctx, ctx.database.db, organizationId, resource);
  return { custom, filters: recordFilters(custom.definition, query as Record<string, unknown>, { blindIndex: ctx.blindIndex, organizationId }) };
}

/** A built-in resource as GET /objects shows it: its standard fields (read-only) before its custom ones. */
function toBuiltinObject(d: StoredBuiltinDefinition): CustomObject {
  const shape = BUILTIN[d.resource];
  return { slug: d.resource, name: shape.name, builtIn: true, fields: [...shape.fields, ...d.definition.fields], stages: [], createdAt: d.createdAt, updatedAt: d.updatedAt };
}

export async function builtinObjects(ctx: Pick<Ctx, 'database'>, organizationId: string): Promise<CustomObject[]> {
  const definitions = await definitionsOf(ctx, ctx.database.db, organizationId);
  return BUILTIN_RESOURCES.map((r) => toBuiltinObject(definitions[r]));
}

export async function getBuiltinObject(ctx: Pick<Ctx, 'database'>, organizationId: string, resource: BuiltinResource): Promise<CustomObject> {
  return toBuiltinObject((await definitionsOf(ctx, ctx.database.db, organizationId))[resource]);
}

/** Besides the custom-object rules (definition.ts): no key of a standard field of the resource, no due role (built-ins have no reminders). */
function builtinErrors(resource: BuiltinResource, definition: Definition): FieldError[] {
  return definition.fields.flatMap((f, i) => [
    ...(BUILTIN[resource].standard.has(f.key) ? [{ field: `fields.${i}.key`, code: 'reserved', message: `"${f.key}" is a standard field of ${resource}` }] : []),
    ...(f.role !== undefined ? [{ field: `fields.${i}.role`, code: 'not_allowed', message: `is only available on custom objects` }] : []),
  ]);
}

/** As for custom objects (objects.service.ts): removing, retyping or requiring a field is checked against the items. */
async function changeErrors(ctx: Ctx, db: Executor, organizationId: string, resource: BuiltinResource, before: Definition, next: Definition): Promise<FieldError[]> {
  const dialect = ctx.database.dialect;
  const change = diffDefinitions(before, next);
  const errors: FieldError[] = [];
  const hasData = (key: string) => customFieldHasData(db, dialect, organizationId, resource, key);
  for (const field of change.removedFields) {
    if (await hasData(field.key)) errors.push({ field: 'fields', code: 'in_use', message: `field "${field.key}" has data in some ${resource} and can't be removed` });
  }
  for (const { before: old, after, index } of change.retypedFields) {
    if (!(await hasData(old.key))) continue;
    const from = old.type === after.type ? `target ${old.target ?? ''} to ${after.target ?? ''}` : `${old.type} to ${after.type}`;
    errors.push({ field: `fields.${index}.${old.type === after.type ? 'target' : 'type'}`, code: 'in_use', message: `can't change from ${from}: field "${old.key}" has data in some ${resource}` });
  }
  for (const { field, index, options } of change.removedOptions) {
    const used = await customOptionsInUse(db, organizationId, resource, field.key, options);
    if (used.length) errors.push({ field: `fields.${index}.options`, code: 'in_use', message: `can't lose ${used.map((o) => `"${o}"`).join(', ')}: some ${resource} of field "${field.key}" have them` });
  }
  for (const { field, index } of change.newlyRequired) {
    if (await customFieldHasGaps(db, dialect, organizationId, resource, field.key)) errors.push({ field: `fields.${index}.required`, code: 'in_use', message: `can't be set: some ${resource} have no value for field "${field.key}"` });
  }
  return errors;
}

/**
 * The custom fields of a PATCH's list, each with its index in the list. The standard fields GET lists
 * (`readOnly: true`) may be sent back, anywhere in the list or not at all: unchanged they are dropped, changed
 * they are `read_only` errors, as is `readOnly` on a key that is no standard field.
 */
function customFieldsSent(resource: BuiltinResource, sent: UpdatedFieldDefinition[]): { fields: Field[]; at: number[]; errors: FieldError[] } {
  const result: { fields: Field[]; at: number[]; errors: FieldError[] } = { fields: [], at: [], errors: [] };
  sent.forEach((f, i) => {
    if (!f.readOnly) {
      result.fields.push(normalizeField(f));
      result.at.push(i);
      return;
    }
    const standard = BUILTIN[resource].fields.find((s) => s.key === f.key);
    if (!standard) result.errors.push({ field: `fields.${i}.readOnly`, code: 'read_only', message: `"${f.key}" is not a standard field of ${resource}; only those are read-only` });
    else if (JSON.stringify(normalizeField(f)) !== JSON.stringify(normalizeField(standard))) result.errors.push({ field: `fields.${i}`, code: 'read_only', message: `"${f.key}" is a standard field of ${resource}; it can't be changed` });
  });
  return result;
}

/** Errors about `fields.j` of the custom list, named by that field's index in the list sent (`at[j]`). */
const atSentIndex = (errors: FieldError[], at: number[]): FieldError[] =>
  errors.map((e) => ({ ...e, field: e.field.replace(/^fields\.(\d+)/, (_, j: string) => `fields.${at[Number(j)]}`) }));

/** PATCH /objects/leads|accounts|deals: `fields` is the complete new list of custom fields, the standard fields sent back or not. */
export async function updateBuiltinObject(ctx: Ctx & Pick<AppContext, 'entityTagger'>, trx: Executor, organizationId: string, resource: BuiltinResource, patch: UpdateObjectBody, opts: WriteOptions = {}): Promise<CustomObject> {
  const errors: FieldError[] = [];
  if (patch.name !== undefined && patch.name.trim() !== BUILTIN[resource].name) errors.push({ field: 'name', code: 'read_only', message: `${resource} is a built-in resource; its name is fixed` });
  if (patch.stages !== undefined && patch.stages.length > 0) errors.push({ field: 'stages', code: 'not_allowed', message: `${resource} take custom fields only${resource === 'deals' ? ' (deal stages: PUT /deal-stages)' : ''}` });
  const sent = patch.fields === undefined ? undefined : customFieldsSent(resource, patch.fields);
  if (sent) errors.push(...sent.errors);
  if (errors.length) throw validationFailed(errors);
  const current = (await lockBuiltinDefinition(trx, ctx.database.dialect, organizationId, resource)) ?? empty(resource);
  checkCondition(ctx, opts, 'object', toBuiltinObject(current));
  if (sent === undefined) return toBuiltinObject(current);
  const next: Definition = { fields: sent.fields, stages: [] };
  const invalid = [
    ...definitionErrors(next, new Set(current.definition.fields.map((f) => f.key))),
    ...builtinErrors(resource, next),
    ...(await definitionTargetErrors(trx, ctx.database.dialect, organizationId, next, resource)),
  ];
  if (invalid.length) throw validationFailed(atSentIndex(invalid, sent.at));
  const inUse = await changeErrors(ctx, trx, organizationId, resource, current.definition, next);
  if (inUse.length) throw validationFailed(atSentIndex(inUse, sent.at));
  if (JSON.stringify(next) === JSON.stringify(current.definition)) return toBuiltinObject(current);
  const now = ctx.clock.now().toISOString();
  const saved: StoredBuiltinDefinition = { resource, definition: next, createdAt: current.createdAt === EPOCH ? now : current.createdAt, updatedAt: now };
  await saveBuiltinDefinition(trx, organizationId, saved);
  return toBuiltinObject(saved);
}

/** The check of a body's custom part against the organization's current fields (batch items, preValidation). */
export async function customFieldCheck(ctx: Pick<Ctx, 'database'>, db: Executor, organizationId: string, resource: BuiltinResource): Promise<OpenFieldCheck> {
  const c = await customFieldsOf(ctx, db, organizationId, resource);
  const shape = BUILTIN[resource];
  return (input, mode) => checkCustomInput(c.definition, input, shape.writable, shape.readOnly, mode).errors;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The custom fields customBodyCheck checked the body against (null where it did not run), for the handler. */
    customFields: CustomFields | null;
  }
}

/** Requests carry the fields their body was checked against, so that a create's handler looks them up no more. */
export function registerCustomFieldChecks(app: FastifyInstance): void {
  app.decorateRequest('customFields', null);
}

/**
 * A preValidation hook for POST and PATCH of a built-in resource: the body's custom part checked against the
 * organization's fields, its problems kept for the schema's 400 (http/extra-field-errors.ts), the fields kept
 * in `request.customFields`. Authentication has run (onRequest); a request without a principal or an object
 * body is left to the route.
 */
export function customBodyCheck(ctx: Pick<Ctx, 'database'>, resource: BuiltinResource, mode: 'create' | 'update') {
  const shape = BUILTIN[resource];
  return async (request: FastifyRequest): Promise<void> => {
    const principal = request.principal;
    const body = request.body;
    if (!principal || typeof body !== 'object' || body === null || Array.isArray(body)) return;
    const c = await customFieldsOf(ctx, ctx.database.db, principal.organization.id, resource);
    request.customFields = c;
    addFieldErrors(request, checkCustomInput(c.definition, body as Record<string, unknown>, shape.writable, shape.readOnly, mode).errors);
  };
}
