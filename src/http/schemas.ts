import { Type, type Static, type TSchema, type TObject, type TUnsafe } from '@sinclair/typebox';
import { ERROR_DESCRIPTIONS, type ErrorCode } from '../errors.js';
import { ID_PATTERN } from '../lib/ids.js';

/** A string enum as plain JSON Schema `enum` (clear validation messages, readable OpenAPI). */
export function StringEnum<const T extends readonly string[]>(values: T, opts: { description?: string; default?: T[number] } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...opts });
}

export function Nullable<T extends TSchema>(schema: T): ReturnType<typeof Type.Union<[T, ReturnType<typeof Type.Null>]>> {
  return Type.Union([schema, Type.Null()]);
}

export const Id = (description = 'Identifier (24 lowercase hex characters).') => Type.String({ pattern: ID_PATTERN, description });
export const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
export const IdParams = Type.Object({ id: Type.String({ description: 'Resource id.' }) });

/** The success envelope: `{status: true, code: "SUCCESS", data: {<key>: <resource>}}`. */
export function Envelope<T extends TObject>(data: T) {
  return Type.Object({ status: Type.Literal(true), code: Type.Literal('SUCCESS'), data });
}

export const FieldErrorSchema = Type.Object({
  field: Type.String(),
  code: Type.String({ description: 'Stable machine-readable reason, e.g. required, invalid_format, unknown_field.' }),
  message: Type.String(),
});

export const ErrorEnvelope = Type.Object(
  {
    status: Type.Literal(false),
    code: Type.Unsafe<ErrorCode>({ type: 'string', enum: Object.keys(ERROR_DESCRIPTIONS) }),
    message: Type.String(),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
    data: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: '412 PRECONDITION_FAILED only: the current resource under its usual key (`data.lead`, …), or its minimal view (MinimalView) for a key that may write but not read it.' }),
    ),
    requestId: Type.String(),
  },
  { $id: 'ErrorEnvelope', description: 'Every error: the HTTP status is authoritative, `code` is stable.' },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

export function ok<T>(data: T): { status: true; code: 'SUCCESS'; data: T } {
  return { status: true, code: 'SUCCESS', data };
}
