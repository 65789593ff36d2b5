import type { TSchema } from '@sinclair/typebox';
import type { FieldError } from '../../errors.js';

/**
 * The arguments of a read tool stand for a REST query string, whose values are text: an agent may write them as
 * that text or as the JSON it means. So a boolean argument (`deleted`, `overdue`, `active`…) also takes the strings
 * "true" and "false", and `externalId` also takes a whole number (an ERP's numeric key, copied as JSON), read as its
 * digits. Anything else is left as sent, for the schema to refuse with the messages below, naming the argument.
 */

const EXTERNAL_ID = 'externalId';
const BOOLEAN_TEXT: Readonly<Record<string, boolean>> = { true: true, false: false };

const propertiesOf = (schema: TSchema) => (schema.properties ?? {}) as Record<string, { type?: unknown }>;
const isBoolean = (schema: TSchema, key: string) => propertiesOf(schema)[key]?.type === 'boolean';
const isExternalId = (schema: TSchema, key: string) => key === EXTERNAL_ID && propertiesOf(schema)[key]?.type === 'string';

/** The arguments with "true"/"false" as booleans and a whole-number externalId as its digits, where the schema takes those. */
export function queryArguments(schema: TSchema, args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).map(([key, value]) => {
      if (typeof value === 'string' && isBoolean(schema, key) && value in BOOLEAN_TEXT) return [key, BOOLEAN_TEXT[value]];
      if (typeof value === 'number' && isExternalId(schema, key) && Number.isSafeInteger(value)) return [key, String(value)];
      return [key, value];
    }),
  );
}

/** The schema's type errors on those arguments, saying what they take. */
export function explainQueryArguments(schema: TSchema, errors: FieldError[]): FieldError[] {
  return errors.map((e) => {
    if (e.code !== 'invalid_type') return e;
    if (isBoolean(schema, e.field)) return { ...e, message: 'must be true or false (or their text, "true" or "false")' };
    if (isExternalId(schema, e.field)) return { ...e, message: 'must be a string, or a whole number of at most 9007199254740991 (send a larger numeric key as a string: as a JSON number it loses digits)' };
    return e;
  });
}
