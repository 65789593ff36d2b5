import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { API_PREFIX } from '../../http/openapi.js';
import { exampleOf } from '../../http/openapi-examples.js';
import { pascalCase } from '../../http/openapi-operation-ids.js';
import { allObjects, type StoredObject } from './objects.store.js';
import { documentedBuiltins, withBuiltinFields } from '../fields/custom-fields.openapi.js';
import { builtinDefinitionsOf } from '../fields/custom-fields.service.js';
import { isRanged } from './record-filters.js';
import { filterParameters, nullable, valueSchema } from './field-schemas.openapi.js';

type Schema = Record<string, unknown>;
interface Document {
  paths: Record<string, Record<string, Schema>>;
  components: { schemas: Record<string, Schema> };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** A write's answer about an existing record: the record, or its minimal view (shared/minimal-view.ts). */
const written = (record: Schema) => ({ anyOf: [record, ref('MinimalView')] });

function stageSchema(o: StoredObject): Schema {
  const keys = o.definition.stages.map((s) => s.key);
  return keys.length ? { type: 'string', enum: keys } : { type: 'null' };
}

/** Record_<slug>, RecordCreate_<slug>, RecordUpdate_<slug> for one object. */
function objectSchemas(o: StoredObject): Record<string, Schema> {
  const fields = o.definition.fields;
  const read = Object.fromEntries(fields.map((f) => [f.key, f.required ? valueSchema(f, 'read') : nullable(valueSchema(f, 'read'))]));
  const write = Object.fromEntries(fields.map((f) => [f.key, f.required ? valueSchema(f, 'write') : nullable(valueSchema(f, 'write'))]));
  const stage = stageSchema(o);
  const externalId = nullable({ type: 'string', minLength: 1, maxLength: 255, description: 'The integrator\'s own key, unique within the object (trash included); null clears it.' });
  const system = {
    id: { type: 'string', pattern: '^[0-9a-f]{24}$' },
    objectSlug: { type: 'string', const: o.slug },
    stage,
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
    deletedAt: nullable({ type: 'string', format: 'date-time' }),
    externalId: nullable({ type: 'string' }),
  };
  const required = fields.filter((f) => f.required).map((f) => f.key);
  return {
    [`Record_${o.slug}`]: {
      type: 'object',
      title: o.name,
      properties: { ...system, ...read },
      required: [...Object.keys(system), ...fields.map((f) => f.key)],
      additionalProperties: false,
    },
    [`RecordCreate_${o.slug}`]: {
      type: 'object',
      properties: { stage: { ...stage, description: 'Defaults to the first stage.' }, externalId, ...write },
      ...(required.length ? { required } : {}),
      additionalProperties: false,
    },
    [`RecordUpdate_${o.slug}`]: {
      type: 'object',
      description: 'Only the keys sent change; null clears a field that is not required.',
      properties: { stage, externalId, ...write },
      minProperties: 1,
      additionalProperties: false,
    },
  };
}

const envelope = (data: Schema) => ({
  type: 'object',
  properties: { status: { const: true }, code: { const: 'SUCCESS' }, data: { type: 'object', properties: data, required: Object.keys(data) } },
  required: ['status', 'code', 'data'],
});
const json = (schema: Schema, description: string, schemas: Schema) => ({
  description,
  content: { 'application/json': { schema, example: exampleOf(schema, schemas) } },
});

/**
 * The generic operation's id with the object in it (listRecords → listProjectsRecords), unique in the document:
 * two slugs that spell the same words (a-b, a_b) fall back to the slug itself.
 */
function typedOperationId(genericId: unknown, o: StoredObject, taken: Set<string>): string {
  const id = String(genericId ?? 'records');
  const words = pascalCase(o.slug);
  const readable = id.includes('Record') ? id.replace('Record', `${words}Record`) : `${id}${words}`;
  const unique = taken.has(readable) ? `${id}_${o.slug}` : readable;
  taken.add(unique);
  return unique;
}

/** The list's `filter[…]` parameters and `sort` values for one object's fields (contract §8). */
function listParameters(o: StoredObject): { filters: Schema[]; sort: Schema } {
  const filters = filterParameters(o.definition.fields, 'records');
  const keys = o.definition.fields.filter((f) => isRanged(f)).map((f) => f.key);
  const sorts = ['-createdAt', 'createdAt', '-updatedAt', 'updatedAt', ...keys.flatMap((k) => [`-${k}`, k])];
  return { filters, sort: { type: 'string', enum: sorts } };
}

/** One typed operation, derived from the generic one (its error responses, headers and security kept). */
function typedOperation(generic: Schema | undefined, o: StoredObject, taken: Set<string>, changes: { summary: string; success: [string, Schema]; body?: string | Schema; stage?: boolean }): Schema {
  const base = structuredClone(generic ?? {}) as { operationId?: string; parameters?: { in: string; name: string; schema?: Schema }[]; responses?: Record<string, unknown> };
  const list = changes.stage ? listParameters(o) : undefined;
  const parameters = [
    ...(base.parameters ?? [])
      .filter((p) => !(p.in === 'path' && p.name === 'object'))
      .map((p) => (list && p.in === 'query' && p.name === 'stage' ? { ...p, schema: stageSchema(o) } : p))
      .map((p) => (list && p.in === 'query' && p.name === 'sort' ? { ...p, schema: list.sort } : p)),
    ...(list?.filters ?? []),
  ];
  const responses = Object.entries(base.responses ?? {}) as [string, { headers?: Schema }][];
  const errors = Object.fromEntries(responses.filter(([status]) => !status.startsWith('2')));
  const headers = responses.find(([status]) => status.startsWith('2'))?.[1].headers;
  return {
    ...base,
    operationId: typedOperationId(base.operationId, o, taken),
    tags: ['Records'],
    summary: changes.summary,
    parameters,
    ...(changes.body ? { requestBody: { required: true, content: { 'application/json': { schema: typeof changes.body === 'string' ? ref(changes.body) : changes.body } } } } : {}),
    responses: { [changes.success[0]]: { ...changes.success[1], ...(headers ? { headers } : {}) }, ...errors },
  };
}

type Json = { [key: string]: Json } & Schema;

/**
 * The typed body and answer of an object's batch route, from the generic one's: each item a create (or update)
 * body of the object with the batch's own keys (`ifMatch`, and `id` for updates), each result's record typed.
 */
function typedBatch(generic: Schema | undefined, o: StoredObject, body: 'RecordCreate' | 'RecordUpdate', schemas: Record<string, Schema>) {
  const operation = structuredClone(generic ?? {}) as Json;
  const request = operation.requestBody?.content?.['application/json']?.schema as Json;
  const genericItem = request.properties!.items!.items as Json;
  const typed = structuredClone(schemas[`${body}_${o.slug}`]!) as Json;
  const batchKeys = Object.fromEntries(Object.entries(genericItem.properties!).filter(([key]) => key === 'id' || key === 'ifMatch'));
  request.properties!.items!.items = { ...typed, properties: { ...batchKeys, ...typed.properties }, ...(body === 'RecordUpdate' ? { required: ['id'] } : {}) } as unknown as Json;
  delete request.examples;
  const success = structuredClone(operation.responses!['200']!.content!['application/json']!.schema) as Json;
  success.properties!.data!.properties!.results!.items!.properties!.record = written(ref(`Record_${o.slug}`)) as unknown as Json;
  return { body: request, success: json(success, 'One result per item, in order', schemas) };
}

/**
 * The served document plus, per custom object of the organization, typed record schemas and typed paths
 * `/objects/<slug>/records…`: a client generated from it knows *their* objects' fields.
 */
export function withOrganizationObjects(document: unknown, objects: readonly StoredObject[]): unknown {
  const doc = structuredClone(document) as Document;
  const list = doc.paths[`${API_PREFIX}/objects/{object}/records`] ?? {};
  const one = doc.paths[`${API_PREFIX}/objects/{object}/records/{id}`] ?? {};
  const restore = doc.paths[`${API_PREFIX}/objects/{object}/records/{id}/restore`] ?? {};
  const batch = doc.paths[`${API_PREFIX}/objects/{object}/records/batch`] ?? {};
  // Typed per object below; the generic one would make `/objects/<slug>/records/{id}` ambiguous.
  if (objects.length > 0) delete doc.paths[`${API_PREFIX}/objects/{object}/records/batch`];
  const taken = new Set(Object.values(doc.paths).flatMap((operations) => Object.values(operations).map((op) => String(op.operationId))));
  for (const o of objects) {
    Object.assign(doc.components.schemas, objectSchemas(o));
    const record = ref(`Record_${o.slug}`);
    const single = envelope({ record });
    const writtenSingle = envelope({ record: written(record) });
    doc.paths[`${API_PREFIX}/objects/${o.slug}/records`] = {
      get: typedOperation(list.get, o, taken, { summary: `List ${o.name} records`, stage: true, success: ['200', json(envelope({ records: { type: 'array', items: record }, pagination: ref('Pagination') }), 'A page of records', doc.components.schemas)] }),
      post: typedOperation(list.post, o, taken, { summary: `Create a ${o.name} record`, body: `RecordCreate_${o.slug}`, success: ['201', json(single, 'The created record', doc.components.schemas)] }),
    };
    doc.paths[`${API_PREFIX}/objects/${o.slug}/records/{id}`] = {
      get: typedOperation(one.get, o, taken, { summary: `Get a ${o.name} record`, success: ['200', json(single, 'The record', doc.components.schemas)] }),
      patch: typedOperation(one.patch, o, taken, { summary: `Update a ${o.name} record`, body: `RecordUpdate_${o.slug}`, success: ['200', json(writtenSingle, 'The updated record', doc.components.schemas)] }),
      delete: typedOperation(one.delete, o, taken, { summary: `Delete a ${o.name} record`, success: ['200', json(writtenSingle, 'The record, in the trash (deletedAt set) or removed for good', doc.components.schemas)] }),
    };
    const creates = typedBatch(batch.post, o, 'RecordCreate', doc.components.schemas);
    const updates = typedBatch(batch.patch, o, 'RecordUpdate', doc.components.schemas);
    doc.paths[`${API_PREFIX}/objects/${o.slug}/records/batch`] = {
      post: typedOperation(batch.post, o, taken, { summary: `Create or upsert up to 100 ${o.name} records`, body: creates.body, success: ['200', creates.success] }),
      patch: typedOperation(batch.patch, o, taken, { summary: `Update up to 100 ${o.name} records`, body: updates.body, success: ['200', updates.success] }),
    };
    doc.paths[`${API_PREFIX}/objects/${o.slug}/records/{id}/restore`] = {
      post: typedOperation(restore.post, o, taken, { summary: `Restore a deleted ${o.name} record`, success: ['200', json(writtenSingle, 'The restored record', doc.components.schemas)] }),
    };
  }
  return doc;
}

/** The API-prefixed document's route options: public, but a key that is sent is authenticated and charged. */
export const OPENAPI_DOCUMENT_CONFIG = { auth: { anyOf: [], optional: true } };

/**
 * GET /openapi.json: public; with a Bearer key the document also describes that organization's custom fields of
 * the leads, accounts and deals the key may read or write, and, for a key that may read records (records:read or
 * objects:admin), its objects. A key that is sent but invalid answers 401 (from the auth hook, see
 * OPENAPI_DOCUMENT_CONFIG) rather than silently serving the generic document.
 *
 * The generic document is built once and shared: a key with nothing of its organization to add gets it as is
 * (no copy, and no query while the organization's definitions are cached); any other gets a copy.
 */
export function openApiDocumentHandler(app: FastifyInstance, ctx: AppContext) {
  return async (request: FastifyRequest): Promise<unknown> => {
    const document = app.swagger();
    const principal = request.principal;
    if (!principal) return document;
    const { scopes } = principal.key;
    const organizationId = principal.organization.id;
    const readsRecords = scopes.some((s) => s === 'records:read' || s === 'objects:admin');
    const builtins = documentedBuiltins(scopes, await builtinDefinitionsOf(ctx, organizationId));
    if (!readsRecords && Object.keys(builtins).length === 0) return document;
    const withObjects = withOrganizationObjects(document, readsRecords ? await allObjects(ctx.database.db, organizationId) : []);
    return withBuiltinFields(withObjects, builtins);
  };
}
