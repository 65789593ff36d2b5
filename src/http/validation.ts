import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { isEmail, normalizePhone } from '../lib/contact.js';
import { plural } from '../lib/plural.js';
import type { FieldError } from '../errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv, formats?: string[]) => Ajv;

/** Formats of our own, validated by the same libraries the services normalize with. */
const CUSTOM_FORMATS: Record<string, (value: string) => boolean> = {
  email: isEmail,
  phone: (value) => normalizePhone(value).ok,
};

const FORMAT_MESSAGES: Record<string, string> = {
  email: 'must be a valid e-mail address',
  phone: 'must be a valid phone number in international format with the country code, e.g. +14155550100',
  'date-time': 'must be an ISO 8601 timestamp, e.g. 2026-11-21T10:00:00.000Z',
  uri: 'must be an absolute URL',
};

function createAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  });
  addFormats(ajv, ['date-time', 'date', 'uri', 'uuid']);
  for (const [name, validate] of Object.entries(CUSTOM_FORMATS)) ajv.addFormat(name, { type: 'string', validate });
  return ajv;
}

/**
 * Bodies are validated strictly (a number is not a string, unknown fields are errors); query strings,
 * params and headers arrive as text, so they are coerced ('2' → 2) before the same checks.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = createAjv(false);
  const coercing = createAjv(true);
  const cache = new WeakMap<object, ValidateFunction>();
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    const key = schema as object;
    const cached = httpPart === 'body' ? cache.get(key) : undefined;
    const validate = cached ?? ajv.compile(schema as object);
    if (httpPart === 'body') cache.set(key, validate);
    return validate as ReturnType<FastifySchemaCompiler<unknown>>;
  };
}

function fieldOf(error: ErrorObject, prefix: string): string {
  const path = error.instancePath.split('/').slice(1).join('.');
  const extra =
    error.keyword === 'required' ? (error.params as { missingProperty: string }).missingProperty
    : error.keyword === 'additionalProperties' ? (error.params as { additionalProperty: string }).additionalProperty
    : '';
  const field = [path, extra].filter(Boolean).join('.');
  return field || prefix;
}

/** The pattern of a text that must hold something besides white space (a name, a title, a note). */
const NOT_BLANK = '\\S';

function describe(error: ErrorObject): Omit<FieldError, 'field'> {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': return { code: 'required', message: 'is required' };
    case 'additionalProperties': return { code: 'unknown_field', message: 'is not a known field' };
    case 'type': return { code: 'invalid_type', message: `must be ${String(p.type).replace(',', ' or ')}` };
    case 'format': return { code: 'invalid_format', message: FORMAT_MESSAGES[String(p.format)] ?? `must be a valid ${String(p.format)}` };
    case 'minLength': return { code: 'too_short', message: Number(p.limit) === 1 ? 'must not be empty' : `must be at least ${plural(Number(p.limit), 'character')}` };
    case 'maxLength': return { code: 'too_long', message: `must be at most ${String(p.limit)} characters` };
    case 'minimum': case 'exclusiveMinimum': case 'maximum': case 'exclusiveMaximum':
      return { code: 'out_of_range', message: `must be ${String(p.comparison)} ${String(p.limit)}` };
    case 'enum': return { code: 'invalid_value', message: `must be one of: ${(p.allowedValues as unknown[]).filter((v) => v !== null).join(', ')}` };
    case 'const': return { code: 'invalid_value', message: `must be ${JSON.stringify(p.allowedValue)}` };
    // `\S` is how names, titles and labels refuse a value of spaces only: say so, rather than "invalid format".
    case 'pattern': return { code: 'invalid_format', message: p.pattern === NOT_BLANK ? 'must not be blank' : 'has an invalid format' };
    case 'minProperties': return { code: 'empty', message: 'must contain at least one field' };
    case 'minItems': return { code: 'too_short', message: `must have at least ${plural(Number(p.limit), 'item')}` };
    case 'maxItems': return { code: 'too_long', message: `must have at most ${plural(Number(p.limit), 'item')}` };
    case 'uniqueItems': return { code: 'duplicate', message: 'must not contain duplicates' };
    default: return { code: 'invalid', message: error.message ?? 'is invalid' };
  }
}

/**
 * Ajv's raw errors become one entry per bad field. A nullable or union field reports the branch whose
 * type matched (e.g. a bad e-mail format) rather than "must match a schema in anyOf".
 */
export function toFieldErrors(errors: ErrorObject[], part: string): FieldError[] {
  const unionPaths = new Set(errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.instancePath));
  const out = new Map<string, FieldError>();
  for (const error of errors) {
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const field = fieldOf(error, part);
    if (out.has(field)) continue;
    const isBranchError = unionPaths.has(error.instancePath) && error.keyword !== 'required' && error.keyword !== 'additionalProperties';
    if (!isBranchError) {
      out.set(field, { field, ...describe(error) });
      continue;
    }
    const branch = errors.filter((e) => e.instancePath === error.instancePath && e.keyword !== 'anyOf' && e.keyword !== 'oneOf');
    const constraint = branch.find((e) => e.keyword !== 'type');
    const types = [...new Set(branch.filter((e) => e.keyword === 'type').map((e) => String((e.params as { type: string }).type)))];
    out.set(field, constraint ? { field, ...describe(constraint) } : { field, code: 'invalid_type', message: `must be ${types.join(' or ')}` });
  }
  return [...out.values()];
}

/**
 * A query parameter sent twice (`status=NEW&status=CONTACTED`, or a client that encodes a list that way) arrives
 * as an array, which the schema reports as a wrong type ("must be string"): say what happened instead.
 */
export function explainRepeatedParameters(errors: FieldError[], query: unknown): FieldError[] {
  if (typeof query !== 'object' || query === null) return errors;
  const values = query as Record<string, unknown>;
  return errors.map((e) =>
    e.code === 'invalid_type' && Array.isArray(values[e.field]) ? { ...e, message: 'is given more than once: send it once (where a parameter takes several values, they go comma-separated in one)' } : e,
  );
}

const standalone = createAjv(false);
const compiled = new WeakMap<object, ValidateFunction>();

/** Validates a value outside a request (CLI files, stored definitions) with the same rules and messages. */
export function validateValue(schema: object, value: unknown, part: string): FieldError[] {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = standalone.compile(schema);
    compiled.set(schema, validate);
  }
  return validate(value) ? [] : toFieldErrors(validate.errors ?? [], part);
}
