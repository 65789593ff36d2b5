import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { isUniqueViolation } from '../../db/database.js';
import { AppError, notFound, validationFailed, type FieldError } from '../../errors.js';
import { checkCondition, type WriteOptions } from '../shared/precondition.js';
import { newId } from '../../lib/ids.js';
import { type ListPosition } from '../../lib/list-cursor.js';
import { listCursors } from '../../crypto/list-cursors.js';
import { listRequest, type ListRequest, type TimeRange } from '../../lib/list-request.js';
import { cursorPagination, offsetOf, paginate } from '../../lib/pagination.js';
import { definitionErrors, diffDefinitions, normalizeField, type Definition } from './definition.js';
import type { CreateObjectBody, CustomObject, ListObjectsQuery, UpdateObjectBody } from './objects.schemas.js';
import { definitionTargetErrors } from './relation-targets.js';
import { builtinObjects, getBuiltinObject, updateBuiltinObject } from '../fields/custom-fields.service.js';
import { BUILTIN_RESOURCES, isBuiltinResource, type BuiltinResource } from '../fields/builtin-resources.js';
import { countObjects, fieldHasData, fieldHasGaps, findObject, insertObject, listObjects as listStored, objectPosition, optionsInUse, stageInUse, updateObject as updateStored, type StoredObject } from './objects.store.js';

type Ctx = Pick<AppContext, 'database' | 'clock' | 'config'>;

export function toCustomObject(o: StoredObject): CustomObject {
  return { slug: o.slug, name: o.name, builtIn: false, fields: o.definition.fields, stages: o.definition.stages, createdAt: o.createdAt, updatedAt: o.updatedAt };
}

/** `existing`: the definition being changed; its field keys stay valid even where today's rules would refuse them. */
function buildDefinition(fields: CreateObjectBody['fields'] = [], stages: CreateObjectBody['stages'] = [], existing?: Definition): Definition {
  const definition = { fields: fields.map(normalizeField), stages: stages.map((s) => ({ key: s.key, label: s.label.trim() })) };
  const errors = definitionErrors(definition, new Set(existing?.fields.map((f) => f.key)));
  if (errors.length) throw validationFailed(errors);
  return definition;
}

export async function createObject(ctx: Ctx, trx: Executor, organizationId: string, input: CreateObjectBody): Promise<CustomObject> {
  const definition = buildDefinition(input.fields, input.stages);
  if (isBuiltinResource(input.slug)) throw slugTaken(input.slug);
  const targetErrors = await definitionTargetErrors(trx, ctx.database.dialect, organizationId, definition, input.slug);
  if (targetErrors.length) throw validationFailed(targetErrors);
  if (await findObject(trx, ctx.database.dialect, organizationId, input.slug)) throw slugTaken(input.slug);
  const limit = ctx.config.maxObjectsPerOrganization;
  if ((await countObjects(trx, ctx.database.dialect, organizationId)) >= limit) {
    throw new AppError('LIMIT_EXCEEDED', `The organization already has ${limit} custom objects, the most allowed (MAX_OBJECTS_PER_ORG)`);
  }
  const now = ctx.clock.now().toISOString();
  try {
    const stored = await insertObject(trx, { id: newId(), organizationId, slug: input.slug, name: input.name.trim(), definition, createdAt: now, updatedAt: now });
    return toCustomObject(stored);
  } catch (err) {
    // Two creates of one slug racing: the unique constraint settles it.
    if (isUniqueViolation(err)) throw slugTaken(input.slug);
    throw err;
  }
}

const slugTaken = (slug: string) => new AppError('CONFLICT', `An object with slug "${slug}" already exists`);

export async function getObject(ctx: Ctx, organizationId: string, slug: string): Promise<CustomObject> {
  if (isBuiltinResource(slug)) return getBuiltinObject(ctx, organizationId, slug);
  const found = await findObject(ctx.database.db, ctx.database.dialect, organizationId, slug);
  if (!found) throw notFound('Object');
  return toCustomObject(found);
}

/**
 * A built-in's position in GET /objects: after every custom object under every sort, in BUILTIN_RESOURCES
 * order. The sort orders what the organization defined; the three built-ins exist with it and their times are
 * those of their custom fields (the epoch before any), so one fixed place keeps totals and cursors simple. Its
 * cursor names its slug with seq 0; a custom object's names its sort value and its seq, which is never 0.
 */
const builtinPosition = (slug: string): Omit<ListPosition, 'sort'> => ({ value: slug, seq: 0 });

function builtinAfter(after: ListPosition | null): BuiltinResource | undefined {
  return after?.seq === 0 && typeof after.value === 'string' && isBuiltinResource(after.value) ? after.value : undefined;
}

/**
 * The organization's objects in the request's sort (newest first by default), then the built-in leads, accounts
 * and deals (contract §9) that the created/updated ranges admit: one list, counted in `total`, paged by `limit`,
 * `page` or cursor alike.
 */
export async function listObjects(ctx: Ctx & Pick<AppContext, 'cursorSeal'>, organizationId: string, query: ListObjectsQuery) {
  const request = listRequest(query, listCursors(ctx, organizationId));
  const builtIns = (await builtinObjects(ctx, organizationId)).filter((o) => inRange(request.range, o));
  const afterBuiltIn = builtinAfter(request.after);
  // A cursor among the built-ins is past every custom object: the store is not asked.
  const stored = afterBuiltIn ? { rows: [], pagination: cursorPagination(request.limit, null) } : await listStored(ctx.database.db, organizationId, request);
  const start = builtinsBefore(request, afterBuiltIn, builtIns, stored.pagination.total ?? 0);
  const shown = builtIns.slice(start, start + request.limit - stored.rows.length);
  const position = objectPosition(request.sort);
  const last = shown.length ? builtinPosition(shown.at(-1)!.slug) : stored.rows.length ? position(stored.rows.at(-1)!) : undefined;
  const cursor = last ? request.cursorAt(last) : null;
  const objects = [...stored.rows.map(toCustomObject), ...shown];
  if (!request.cursor) return { objects, pagination: paginate(request, (stored.pagination.total ?? 0) + builtIns.length, cursor) };
  const hasMore = stored.pagination.hasMore || start + shown.length < builtIns.length;
  return { objects, pagination: cursorPagination(request.limit, hasMore ? cursor : null) };
}

/** How many of the listed built-ins come before the page: those up to a cursor's, or those a page's offset passes. */
function builtinsBefore(request: ListRequest, afterBuiltIn: BuiltinResource | undefined, builtIns: readonly CustomObject[], customTotal: number): number {
  if (afterBuiltIn) return builtIns.filter((o) => BUILTIN_RESOURCES.indexOf(o.slug as BuiltinResource) <= BUILTIN_RESOURCES.indexOf(afterBuiltIn)).length;
  return request.cursor ? 0 : Math.max(0, offsetOf(request) - customTotal);
}

/** Whether an item's times fall within a list's created/updated ranges (bounds exclusive, as in the stores). */
function inRange(range: TimeRange, o: { createdAt: string; updatedAt: string }): boolean {
  return (range.createdAfter === undefined || o.createdAt > range.createdAfter)
    && (range.createdBefore === undefined || o.createdAt < range.createdBefore)
    && (range.updatedAfter === undefined || o.updatedAt > range.updatedAfter)
    && (range.updatedBefore === undefined || o.updatedAt < range.updatedBefore);
}

/**
 * Checks a definition change against the object's records: removing or retyping a field that has data,
 * changing the due role of a field that has data, removing a stage or option in use, or requiring a field
 * some record lacks is refused, every case named. Unused fields, stages and options may go.
 */
async function changeErrors(ctx: Ctx, db: Executor, object: StoredObject, next: Definition): Promise<FieldError[]> {
  const dialect = ctx.database.dialect;
  const change = diffDefinitions(object.definition, next);
  const errors: FieldError[] = [];
  for (const field of change.removedFields) {
    if (await fieldHasData(db, dialect, object.id, field.key)) {
      errors.push({ field: 'fields', code: 'in_use', message: `field "${field.key}" has data in some records and can't be removed` });
    }
  }
  for (const { before, after, index } of change.retypedFields) {
    if (await fieldHasData(db, dialect, object.id, before.key)) {
      const from = before.type === after.type ? `target ${before.target ?? ''} to ${after.target ?? ''}` : `${before.type} to ${after.type}`;
      errors.push({ field: `fields.${index}.${before.type === after.type ? 'target' : 'type'}`, code: 'in_use', message: `can't change from ${from}: field "${before.key}" has data in some records` });
    }
  }
  for (const { field, index } of change.roleChanged) {
    if (await fieldHasData(db, dialect, object.id, field.key)) {
      errors.push({ field: `fields.${index}.role`, code: 'in_use', message: `can't change: field "${field.key}" has data in some records` });
    }
  }
  for (const { field, index, options } of change.removedOptions) {
    const used = await optionsInUse(db, object.id, field.key, options);
    if (used.length) errors.push({ field: `fields.${index}.options`, code: 'in_use', message: `can't lose ${used.map((o) => `"${o}"`).join(', ')}: some records of field "${field.key}" have them` });
  }
  for (const { field, index } of change.newlyRequired) {
    if (await fieldHasGaps(db, dialect, object.id, field.key)) {
      errors.push({ field: `fields.${index}.required`, code: 'in_use', message: `can't be set: some records have no value for field "${field.key}"` });
    }
  }
  for (const stage of change.removedStages) {
    if (await stageInUse(db, object.id, stage.key)) errors.push({ field: 'stages', code: 'in_use', message: `stage "${stage.key}" has records and can't be removed` });
  }
  return errors;
}

/** Renames, and replaces the field and stage lists (each, when sent, is the complete new list). */
export async function updateObject(ctx: Ctx & Pick<AppContext, 'entityTagger'>, trx: Executor, organizationId: string, slug: string, patch: UpdateObjectBody, opts: WriteOptions = {}): Promise<CustomObject> {
  if (isBuiltinResource(slug)) return updateBuiltinObject(ctx, trx, organizationId, slug, patch, opts);
  // The body schema takes `readOnly` for the built-ins' standard fields; a custom object has none.
  const readOnly = (patch.fields ?? []).flatMap((f, i) => (f.readOnly ? [{ field: `fields.${i}.readOnly`, code: 'unknown_field', message: 'is not a known field (custom objects have no read-only fields)' }] : []));
  if (readOnly.length) throw validationFailed(readOnly);
  // Read FOR UPDATE already: the tag compared is the one of the version this write replaces.
  const object = await findObject(trx, ctx.database.dialect, organizationId, slug, 'update');
  if (!object) throw notFound('Object');
  checkCondition(ctx, opts, 'object', toCustomObject(object));
  const next = buildDefinition(patch.fields ?? object.definition.fields, patch.stages ?? object.definition.stages, object.definition);
  const errors = [...(await definitionTargetErrors(trx, ctx.database.dialect, organizationId, next, object.slug)), ...(await changeErrors(ctx, trx, object, next))];
  if (errors.length) throw validationFailed(errors);
  const updated: StoredObject = { ...object, name: patch.name?.trim() ?? object.name, definition: next };
  if (JSON.stringify(toCustomObject(updated)) === JSON.stringify(toCustomObject(object))) return toCustomObject(object);
  updated.updatedAt = ctx.clock.now().toISOString();
  await updateStored(trx, updated);
  return toCustomObject(updated);
}
