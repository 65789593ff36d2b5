import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Nullable, Timestamp } from '../../http/schemas.js';
import { Pagination } from '../../lib/pagination.js';
import { ListParams } from '../../lib/list-request.js';
import { DeletedAt, TrashQuery } from '../shared/trash.routes.js';
import { ExternalIdInput, ExternalIdOutput, ExternalIdQuery } from '../shared/external-id.js';
import { WrittenEnvelope } from '../shared/minimal-view.js';

/*
 * Record bodies are checked against the object's definition by the service, not here, so that one 400 lists
 * every bad field at once (type, format, option, required, unknown). The request schema only demands an
 * object; the typed schemas of an organization's own objects are in its OpenAPI document (objects.openapi.ts).
 */
const stage = Type.Unsafe<string | null>({ description: 'One of the object\'s stage keys (string), or null for an object without stages. Defaults to the first stage.' });

export const RecordInput = Type.Object(
  { stage: Type.Optional(stage), externalId: Type.Optional(ExternalIdInput) },
  {
    additionalProperties: true,
    description: 'The record\'s field values by field key, typed as the object defines them; unknown keys are refused.',
    examples: [{ title: 'Website relaunch', priority: 'high', due_on: '2026-11-21', stage: 'planned' }],
  },
);
export type RecordInput = Record<string, unknown>;

export const RecordPatch = Type.Object(
  { stage: Type.Optional(stage), externalId: Type.Optional(ExternalIdInput) },
  { additionalProperties: true, minProperties: 1, description: 'Only the keys sent change; null clears a field that is not required.' },
);

export const ObjectRecord = Type.Object(
  {
    id: Type.String({ description: 'Record id (24 lowercase hex characters).' }),
    objectSlug: Type.String({ description: 'Slug of the record\'s object.' }),
    stage: Nullable(Type.String({ description: 'Stage key; null when the object has no stages.' })),
    createdAt: Timestamp('UTC instant of creation.'),
    updatedAt: Timestamp('UTC instant of the last change.'),
    deletedAt: DeletedAt,
    externalId: ExternalIdOutput,
  },
  {
    $id: 'Record',
    additionalProperties: true,
    description:
      'Flat: one property per field of the object (null when unset). date fields read as YYYY-MM-DDT00:00:00.000Z, datetime fields as UTC instants, e-mails lower-case, phones E.164.',
  },
);

export const ObjectParams = Type.Object({ object: Type.String({ description: 'Object slug.' }) });
export const RecordParams = Type.Object({ object: Type.String({ description: 'Object slug.' }), id: Type.String({ description: 'Record id.' }) });

const FIELD_FILTER = '^filter\\[[a-zA-Z][a-zA-Z0-9_]{0,49}\\](\\[[a-z]{1,10}\\])?$';
/** filter[<field>] and filter[<field>][gte|lte|gt|lt], checked against a definition by the service (record-filters.ts). */
export const FieldFilterParams = { [FIELD_FILTER]: Type.String({ maxLength: 1000 }) };
/**
 * The same parameters as JSON arguments (the MCP tools): a value may also be a number or a boolean, which the
 * service takes for a number or a boolean field only and refuses, naming the parameter, for any other.
 */
export const FieldFilterArgs = { [FIELD_FILTER]: Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean()]) };

export const ListRecordsQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of any text or long_text field (1 character or more).' })),
    stage: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Only records in this stage.' })),
    overdue: Type.Optional(Type.Boolean({ description: 'true: only records whose due date (the field with role due) is before the organization\'s local today.' })),
    ...ExternalIdQuery,
    sort: Type.Optional(
      Type.String({
        pattern: '^-?[a-zA-Z][a-zA-Z0-9_]{0,49}$',
        description: 'createdAt, updatedAt, or the key of a date, datetime or number field; a leading - is descending. Default -createdAt (newest first). Records without a value come last descending, first ascending.',
      }),
    ),
    ...ListParams,
    ...TrashQuery,
  },
  {
    additionalProperties: false,
    // filter[<field>] (equality) and filter[<field>][gte|lte|gt|lt] (ranges): checked against the object's
    // definition by the service; the organization's own OpenAPI document lists them per object.
    patternProperties: FieldFilterParams,
  },
);
export type ListRecordsQuery = Static<typeof ListRecordsQuery>;

export const RecordEnvelope = Envelope(Type.Object({ record: Type.Ref(ObjectRecord) }));
/** The answer of a write of an existing record (update, delete, restore): the record, or its minimal view. */
export const WrittenRecordEnvelope = WrittenEnvelope('record', Type.Ref(ObjectRecord));
export const RecordListEnvelope = Envelope(Type.Object({ records: Type.Array(Type.Ref(ObjectRecord)), pagination: Type.Ref(Pagination) }));
