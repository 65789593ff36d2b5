import fc from 'fast-check';
import { resolve, type JsonSchema, type OpenApiDocument } from './openapi.js';

/** Unicode that breaks naive code: unpaired surrogates, bidi overrides, zero-width, NUL, BOM, combining marks, astral. */
export const UNICODE_EDGES = [
  '\uD800', '\uDFFF', 'a\uD83Db', '\uDE00lone low', '\u202Eevil\u202C', '\u200F\u05E9\u05DC\u05D5\u05DD', '\u200B', 'zero\u200Dwidth\u2060join',
  '\u0000', 'nul\u0000inside', '\uFEFFbom', 'e\u0301\u0301\u0301', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '👩‍👩‍👧‍👦', '\u2028\u2029', '\r\n\t', 'İı', 'ß', '\uFFFF\uFFFE',
];

/** Query syntax of SQL LIKE, FTS5 and PostgreSQL: none of it may reach the database as syntax. */
export const QUERY_SYNTAX = [
  '"', '""', '"*"', '*', 'a*', '*a', 'NEAR', 'NEAR(a b)', 'a NEAR b', 'OR', 'a OR b', 'AND', 'NOT', 'a AND NOT b', '^a', 'col:val', '(a', 'a)',
  '%', '%%', '_', '__', '\\', 'a\\', '\\%', "'", "''", "' OR '1'='1", "'; drop table leads; --", '--', '/* x */', ';', 'a"b', '{a}', '[a]', '$1', '?', ':name',
];

export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype'];

/** Values of the wrong JSON type for any field. */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

export function hostileString(bodyLimit: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...UNICODE_EDGES) },
    { weight: 3, arbitrary: fc.constantFrom(...QUERY_SYNTAX) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_KEYS) },
    // Long strings, from just over field limits to around the whole body limit.
    { weight: 1, arbitrary: fc.integer({ min: 201, max: bodyLimit + 1024 }).map((n) => 'x'.repeat(n)) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...UNICODE_EDGES), fc.integer({ min: 100, max: 2000 })).map(([s, n]) => s.repeat(n)) },
  );
}

/** A string meeting the schema's format/pattern/length (what a well-behaved client sends). */
function validString(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.enum) return fc.constantFrom(...(schema.enum as string[]));
  switch (schema.format) {
    case 'email': return fc.emailAddress().filter((e) => e.length <= (schema.maxLength ?? 254));
    case 'phone': return fc.constantFrom('+14155550100', '+44 20 7946 0958', '+33 1 23 45 67 89', '+81 3-1234-5678', '+4915112345678');
    case 'date-time': return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'date': return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case 'uri': return fc.webUrl();
  }
  if (schema.pattern === '^[0-9a-f]{24}$') return fc.stringMatching(/^[0-9a-f]{24}$/);
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 60, Math.max(min, 60));
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= max);
  return fc.string({ minLength: min, maxLength: max });
}

/** A value that conforms to `schema` (resolving references), bounded in size. */
export function validValue(doc: OpenApiDocument, raw: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(doc, raw);
  if (schema.const !== undefined) return fc.constant(schema.const);
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return fc.oneof(...union.map((s) => validValue(doc, s, depth + 1)));
  if (schema.allOf) return validValue(doc, Object.assign({}, ...schema.allOf.map((s) => resolve(doc, s))), depth + 1);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': return validString(schema);
    case 'integer': return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case 'number': return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case 'boolean': return fc.boolean();
    case 'null': return fc.constant(null);
    case 'array': return fc.array(validValue(doc, schema.items ?? {}, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object': {
      if (depth > 6 || !schema.properties) return fc.constant({});
      const model = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, validValue(doc, v, depth + 1)]));
      return fc.record(model, { requiredKeys: schema.required ?? [] });
    }
    default: return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A conforming value, or one field (at any depth of an object) swapped for something hostile or mistyped. */
export function mutatedValue(doc: OpenApiDocument, schema: JsonSchema, bodyLimit: number): fc.Arbitrary<unknown> {
  const hostile = fc.oneof(hostileString(bodyLimit), wrongType);
  return fc.oneof(
    { weight: 2, arbitrary: validValue(doc, schema) },
    {
      weight: 5,
      arbitrary: fc.tuple(validValue(doc, schema), fc.string({ maxLength: 12 }), hostile, fc.nat()).map(([value, extraKey, bad, pick]) => {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) return bad;
        const keys = Object.keys(value);
        const target = keys.length > 0 && pick % 3 !== 0 ? keys[pick % keys.length]! : extraKey;
        return { ...value, [target]: bad };
      }),
    },
    { weight: 1, arbitrary: wrongType },
  );
}
