import { API_PREFIX } from '../../http/openapi.js';
import { exampleOf } from '../../http/openapi-examples.js';
import type { Scope } from '../orgs/principal.js';
import type { Definition } from '../objects/definition.js';
import { filterParameters, nullable, valueSchema } from '../objects/field-schemas.openapi.js';
import { BUILTIN_RESOURCES, type BuiltinResource } from './builtin-resources.js';

type Schema = Record<string, any>;
interface Document {
  paths: Record<string, Record<string, Schema>>;
  components: { schemas: Record<string, Schema> };
}

/** Per resource: its component, its collection and item paths, and its noun in descriptions. */
const PLACES: Record<BuiltinResource, { component: string; path: string; noun: string }> = {
  leads: { component: 'Lead', path: '/leads', noun: 'leads' },
  accounts: { component: 'Account', path: '/accounts', noun: 'accounts' },
  deals: { component: 'Deal', path: '/deals', noun: 'deals' },
};

/**
 * The success examples that show one of `components` again: they were built from the generic schemas (without
 * the custom fields, which those schemas now require), so every one would contradict its schema.
 */
function refreshExamples(doc: Document, components: readonly string[]): void {
  const refs = components.map((name) => `"#/components/schemas/${name}"`);
  for (const operations of Object.values(doc.paths)) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values((operation.responses ?? {}) as Record<string, Schema>)) {
        const body = response.content?.['application/json'];
        if (body?.example === undefined || !body.schema) continue;
        const text = JSON.stringify(body.schema);
        if (refs.some((ref) => text.includes(ref))) body.example = exampleOf(body.schema, doc.components.schemas);
      }
    }
  }
}

function resolved(doc: Document, schema: Schema): Schema {
  const name = typeof schema.$ref === 'string' ? schema.$ref.split('/').pop()! : undefined;
  return structuredClone(name ? doc.components.schemas[name]! : schema);
}

/**
 * Types the custom fields on `schema` (a body, or a batch's item) beside the standard ones, required on a create
 * where the definition says so; nothing else is accepted then. Returns an example value of each required one.
 */
function typeFields(doc: Document, schema: Schema, definition: Definition, mode: 'create' | 'update'): Schema {
  for (const f of definition.fields) schema.properties[f.key] = f.required ? valueSchema(f, 'write') : nullable(valueSchema(f, 'write'));
  const required = mode === 'create' ? definition.fields.filter((f) => f.required) : [];
  if (required.length) schema.required = [...(schema.required ?? []), ...required.map((f) => f.key)];
  schema.additionalProperties = false;
  return Object.fromEntries(required.map((f) => [f.key, exampleOf(schema.properties[f.key], doc.components.schemas, 0, f.key)]));
}

/** A body schema with the custom fields typed (typeFields). */
function typedBody(doc: Document, operation: Schema | undefined, definition: Definition, mode: 'create' | 'update'): void {
  const content = operation?.requestBody?.content?.['application/json'];
  if (!content?.schema) return;
  const body = resolved(doc, content.schema);
  const requiredValues = typeFields(doc, body, definition, mode);
  content.schema = body;
  // The route's example is the generic one: without a required custom field it would be a body the API refuses.
  if (content.example !== undefined) content.example = { ...content.example, ...requiredValues };
}

/**
 * A batch body (`POST …/batch`, `PATCH …/batch`) with its items typed as the single create and update bodies
 * are: the same custom fields, required on a create item as on `POST` (an upsert item that finds its holder is
 * checked as an update, as the single PATCH would be). Its example gains the required ones too.
 */
function typedBatchBody(doc: Document, operation: Schema | undefined, definition: Definition, mode: 'create' | 'update'): void {
  const content = operation?.requestBody?.content?.['application/json'];
  if (!content?.schema) return;
  const body = resolved(doc, content.schema);
  const requiredValues = typeFields(doc, body.properties.items.items, definition, mode);
  const withRequired = (example: Schema) => ({ ...example, items: example.items.map((item: Schema) => ({ ...item, ...requiredValues })) });
  if (Array.isArray(body.examples)) body.examples = body.examples.map(withRequired);
  if (content.example !== undefined) content.example = withRequired(content.example);
  content.schema = body;
}

/**
 * The definitions a key's document types: those with custom fields, of the resources the key may read or
 * write (`leads:read` or `leads:write` for leads…), as the key's scopes decide what it can call.
 */
export function documentedBuiltins(scopes: readonly Scope[], definitions: Record<BuiltinResource, Definition>): Partial<Record<BuiltinResource, Definition>> {
  const usable = (r: BuiltinResource) => scopes.includes(`${r}:read`) || scopes.includes(`${r}:write`);
  return Object.fromEntries(BUILTIN_RESOURCES.filter((r) => usable(r) && definitions[r].fields.length > 0).map((r) => [r, definitions[r]]));
}

/**
 * The organization's custom fields of leads, accounts and deals in its own OpenAPI document (`document`, a
 * copy: it is changed in place): typed on the Lead, Account and Deal schemas (flat, null when unset), on their
 * create and update bodies and their batches' items, and as `filter[…]` parameters of their lists, so that a
 * client generated from it knows them.
 */
export function withBuiltinFields(document: unknown, definitions: Partial<Record<BuiltinResource, Definition>>): unknown {
  const doc = document as Document;
  for (const resource of BUILTIN_RESOURCES) {
    const definition = definitions[resource];
    if (!definition) continue;
    const { component, path, noun } = PLACES[resource];
    const shown = doc.components.schemas[component];
    if (shown) {
      for (const f of definition.fields) shown.properties[f.key] = f.required ? valueSchema(f, 'read') : nullable(valueSchema(f, 'read'));
      shown.required = [...(shown.required ?? []), ...definition.fields.map((f) => f.key)];
      shown.additionalProperties = false;
    }
    const list = doc.paths[`${API_PREFIX}${path}`];
    const item = doc.paths[`${API_PREFIX}${path}/{id}`];
    typedBody(doc, list?.post, definition, 'create');
    typedBody(doc, item?.patch, definition, 'update');
    const batch = doc.paths[`${API_PREFIX}${path}/batch`];
    typedBatchBody(doc, batch?.post, definition, 'create');
    typedBatchBody(doc, batch?.patch, definition, 'update');
    if (list?.get) list.get.parameters = [...(list.get.parameters ?? []), ...filterParameters(definition.fields, noun)];
  }
  refreshExamples(doc, BUILTIN_RESOURCES.filter((r) => definitions[r]).map((r) => PLACES[r].component));
  return doc;
}
