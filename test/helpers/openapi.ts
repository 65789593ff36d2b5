/** Just enough of OpenAPI 3.1 to walk a document's operations and resolve its schemas. */
export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  examples?: unknown[];
  default?: unknown;
};

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** OpenAPI template, e.g. /api/public/v1/leads/{id}. */
  path: string;
  parameters: Parameter[];
  body: JsonSchema | undefined;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema: JsonSchema }> } }>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export function operationsOf(doc: OpenApiDocument): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'patch', 'put', 'delete'].includes(method)) continue;
      out.push({
        method: method.toUpperCase() as Operation['method'],
        path,
        parameters: op.parameters ?? [],
        body: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return out;
}

/** Follows `#/components/schemas/X` references (one level at a time, as the generators descend). */
export function resolve(doc: OpenApiDocument, schema: JsonSchema): JsonSchema {
  let s = schema;
  while (s.$ref) {
    const name = s.$ref.replace('#/components/schemas/', '');
    const target = doc.components?.schemas?.[name];
    if (!target) throw new Error(`unresolved ${s.$ref}`);
    s = target;
  }
  return s;
}

/** `/a/{id}/b/{x}` → the literal prefix before each parameter: {id: '/a', x: '/a/{id}/b'}. */
export function paramPrefixes(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of path.matchAll(/\{(\w+)\}/g)) out[m[1]!] = path.slice(0, m.index! - 1);
  return out;
}
