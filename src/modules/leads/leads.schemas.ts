import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { Pagination } from '../../lib/pagination.js';
import { ListParams, NAMED_SORTS, SortQuery } from '../../lib/list-request.js';
import { DeletedAt, TrashQuery } from '../shared/trash.routes.js';
import { LEAD_SOURCES } from '../orgs/rules.schemas.js';
import { FieldFilterParams } from '../objects/records.schemas.js';
import { ExternalIdInput, ExternalIdOutput, ExternalIdQuery } from '../shared/external-id.js';
import { WrittenEnvelope } from '../shared/minimal-view.js';

export const LEAD_STATUSES = ['NEW', 'CONTACTED', 'QUALIFIED', 'UNQUALIFIED', 'CONVERTED'] as const;

const text = (max: number, description: string) => Type.String({ maxLength: max, description });

const writable = {
  email: Nullable(Type.String({ format: 'email', maxLength: 254, description: 'Validated, stored lower-cased and trimmed, encrypted at rest; exact match in search.' })),
  phoneNumber: Nullable(Type.String({ format: 'phone', maxLength: 40, description: 'International format with the country code; stored and returned as E.164 (+14155550100).' })),
  source: Nullable(StringEnum(LEAD_SOURCES, { description: 'Origin of the lead.' })),
  sourceCampaign: Nullable(text(200, 'Campaign identifier.')),
  status: StringEnum(LEAD_STATUSES, { description: 'Pipeline status (default NEW).' }),
  company: Nullable(text(200, 'Company name.')),
  title: Nullable(text(200, 'Job title.')),
  notes: Nullable(text(10_000, 'Free text.')),
  ownerId: Nullable(Id('User id of the owner; set by assignment rules when omitted.')),
  accountId: Nullable(Id('Account this lead belongs to.')),
  externalId: ExternalIdInput,
};

const name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: "Person's name." });

/** Custom fields (PATCH /objects/leads) sit beside the standard ones; the service checks them (unknown keys are 400). */
const CUSTOM = 'Also the organization\'s custom lead fields, by key (its own OpenAPI document types them); other keys are refused.';

export const CreateLeadBody = Type.Composite([Type.Object({ name }), Type.Partial(Type.Object(writable))], {
  additionalProperties: true,
  description: CUSTOM,
  examples: [{ name: 'Ada Lovelace', email: 'ada@example.com', phoneNumber: '+14155550100', source: 'WEBSITE', sourceCampaign: 'spring-2026' }],
});
export type CreateLeadBody = Static<typeof CreateLeadBody>;

export const UpdateLeadBody = Type.Partial(Type.Object({ name, ...writable }), {
  additionalProperties: true,
  minProperties: 1,
  description: `Only the fields sent change; null clears an optional field. ${CUSTOM}`,
});
export type UpdateLeadBody = Static<typeof UpdateLeadBody>;

export const Lead = Type.Object(
  {
    id: Id(),
    name: Type.String(),
    email: Nullable(Type.String()),
    phoneNumber: Nullable(Type.String()),
    source: Nullable(StringEnum(LEAD_SOURCES)),
    sourceCampaign: Nullable(Type.String()),
    status: StringEnum(LEAD_STATUSES),
    company: Nullable(Type.String()),
    title: Nullable(Type.String()),
    notes: Nullable(Type.String()),
    ownerId: Nullable(Type.String()),
    accountId: Nullable(Type.String()),
    duplicateOf: Nullable(Type.String({ description: 'Id of an older lead with the same e-mail or phone, else null.' })),
    externalId: ExternalIdOutput,
    createdAt: Timestamp('UTC instant of creation.'),
    updatedAt: Timestamp('UTC instant of the last change.'),
    deletedAt: DeletedAt,
  },
  { $id: 'Lead', additionalProperties: true, description: 'Custom lead fields follow the standard ones, flat (null when unset).' },
);
export type Lead = Static<typeof Lead>;

export const ListLeadsQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'An e-mail or phone (with country code) → exact match; otherwise a case-insensitive substring of the name.' })),
    ...ExternalIdQuery,
    status: Type.Optional(StringEnum(LEAD_STATUSES, { description: 'Only leads with this status.' })),
    source: Type.Optional(StringEnum(LEAD_SOURCES, { description: 'Only leads from this source.' })),
    sourceCampaign: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only leads of this campaign (exact).' })),
    ownerId: Type.Optional(Id('Only leads owned by this user.')),
    accountId: Type.Optional(Id('Only leads of this account.')),
    ...ListParams,
    ...SortQuery(NAMED_SORTS),
    ...TrashQuery,
  },
  { additionalProperties: false, patternProperties: FieldFilterParams },
);
export type ListLeadsQuery = Static<typeof ListLeadsQuery>;

export const LeadEnvelope = Envelope(Type.Object({ lead: Type.Ref(Lead) }));
/** The answer of a write of an existing lead (update, delete, restore): the lead, or its minimal view. */
export const WrittenLeadEnvelope = WrittenEnvelope('lead', Type.Ref(Lead));
export const LeadListEnvelope = Envelope(Type.Object({ leads: Type.Array(Type.Ref(Lead)), pagination: Type.Ref(Pagination) }));
