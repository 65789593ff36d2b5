type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  pattern?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  examples?: unknown[];
  'x-example-items'?: Record<string, unknown>[];
};

const SAMPLE_ID = '6650f0c8f1e2d3c4b5a69788';
/**
 * Nesting followed before giving up (a recursive schema ends there): each `$ref`, variant, object and array is one.
 * A typed record's multi_select option inside a batch result sits 10 deep.
 */
const MAX_DEPTH = 16;
const BY_FORMAT: Record<string, string> = {
  'date-time': '2026-11-21T10:00:00.000Z',
  date: '2026-11-21',
  email: 'ada@example.com',
  uri: 'https://example.com/crm',
  phone: '+14155550100',
};

/** Plain strings named like these read better than "string" (response schemas rarely carry formats). */
const BY_NAME: Record<string, string> = {
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  phoneNumber: '+14155550100',
  company: 'Analytical Engines',
  url: 'https://example.com/crm',
  currency: 'EUR',
  amount: '1200.00',
  externalId: 'erp-10042',
};
const isIdName = (name: string) => name !== 'externalId' && /(^id|Id|Of)$/.test(name);
/** Nullable fields that are null on the usual item (a live one, not a duplicate): the example shows them so. */
const NULL_WHEN_USUAL: ReadonlySet<string> = new Set(['deletedAt', 'duplicateOf']);

/**
 * An example value for a response schema, built from what the schema already says (its examples, defaults,
 * enums, formats): documentation renderers and mock servers show it without each route writing one by hand.
 */
export function exampleOf(schema: Schema | undefined, schemas: Record<string, unknown>, depth = 0, name = ''): unknown {
  if (!schema || depth > MAX_DEPTH) return undefined;
  if (schema.$ref) return exampleOf(schemas[schema.$ref.split('/').pop()!] as Schema, schemas, depth + 1, name);
  if (schema.examples?.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (schema.enum?.length) return schema.enum[0];
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) {
    if (NULL_WHEN_USUAL.has(name) && variants.some((v) => v.type === 'null')) return null;
    return exampleOf(variants.find((v) => v.type !== 'null') ?? variants[0], schemas, depth + 1, name);
  }
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s) => exampleOf(s, schemas, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, s]) => [key, exampleOf(s, schemas, depth + 1, key)]));
    case 'array':
      if (schema.items && schema['x-example-items']) return schema['x-example-items'].map((item) => exampleItem(item, schema.items!, schemas, depth + 1));
      return schema.items ? [exampleOf(schema.items, schemas, depth + 1)] : [];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      if (schema.format && BY_FORMAT[schema.format]) return BY_FORMAT[schema.format];
      if (schema.pattern?.includes('0-9a-f') || isIdName(name)) return SAMPLE_ID;
      return BY_NAME[name] ?? 'string';
    default:
      return undefined;
  }
}

/**
 * One item of an array whose schema lists the items to show (`x-example-items`: a batch's results, one per
 * outcome, rather than one item holding every optional property): its properties as given, those given as
 * `true` generated from the item schema (the resource of a result, which its route's schema names).
 */
function exampleItem(template: Record<string, unknown>, items: Schema, schemas: Record<string, unknown>, depth: number): unknown {
  const item = items.$ref ? (schemas[items.$ref.split('/').pop()!] as Schema) : items;
  return Object.fromEntries(Object.entries(template).map(([key, value]) => [key, value === true ? exampleOf(item.properties?.[key], schemas, depth + 1, key) : value]));
}
