import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Id, Nullable, Timestamp } from '../../http/schemas.js';
import { Pagination } from '../../lib/pagination.js';
import { ListParams, NAMED_SORTS, SortQuery } from '../../lib/list-request.js';
import { DeletedAt, TrashQuery } from '../shared/trash.routes.js';
import { FieldFilterParams } from '../objects/records.schemas.js';
import { ExternalIdInput, ExternalIdOutput, ExternalIdQuery } from '../shared/external-id.js';
import { WrittenEnvelope } from '../shared/minimal-view.js';

const AMOUNT_RULES =
  'Exact decimal, ≥ 0, at most 15 integer digits and 4 decimals; returned as a decimal string, never a float. ' +
  'A string keeps the scale it was sent with ("1234.50" stays "1234.50"; leading zeros of the integer part are dropped). ' +
  'A JSON number is accepted when it has at most 15 significant digits and is returned in its shortest form (0.1 → "0.1", 1.50 → "1.5"); ' +
  'send a string to keep trailing zeros or for more digits. Requires `currency`.';

const DATE_RULES =
  'Date-only. Send YYYY-MM-DD (kept as that day) or a timestamp with Z or an offset, kept as the nearest UTC day ' +
  '(offset applied first; from 12:00:00.000Z on it is the next day). Returned as YYYY-MM-DDT00:00:00.000Z. Impossible dates are refused.';

const writable = {
  stage: Type.String({ minLength: 1, maxLength: 50, description: "A key of the organization's deal stages (GET /deal-stages); defaults to the first stage." }),
  amount: Nullable(Type.Union([Type.String({ maxLength: 40 }), Type.Number()], { description: AMOUNT_RULES })),
  currency: Nullable(Type.String({ pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code (EUR, USD, …), stored upper-cased. Required when amount is set.' })),
  accountId: Nullable(Id('Account of this organization the deal is with.')),
  leadId: Nullable(Id('Lead of this organization the deal came from.')),
  ownerId: Nullable(Id('User of this organization who owns the deal.')),
  expectedCloseDate: Nullable(Type.String({ maxLength: 64, description: DATE_RULES })),
  externalId: ExternalIdInput,
};

const name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Deal name.' });

/** Custom fields (PATCH /objects/deals) sit beside the standard ones; the service checks them (unknown keys are 400). */
const CUSTOM = 'Also the organization\'s custom deal fields, by key (its own OpenAPI document types them); other keys are refused.';

export const CreateDealBody = Type.Composite([Type.Object({ name }), Type.Partial(Type.Object(writable))], {
  additionalProperties: true,
  description: CUSTOM,
  examples: [{ name: 'Analytical Engines — 40 seats', stage: 'proposal', amount: '48000.00', currency: 'EUR', expectedCloseDate: '2026-03-31' }],
});
export type CreateDealBody = Static<typeof CreateDealBody>;

export const UpdateDealBody = Type.Partial(Type.Object({ name, ...writable }), {
  additionalProperties: true,
  minProperties: 1,
  description: `Only the fields sent change; null clears an optional field. A stage change records deal.stage_changed; other changes deal.updated. ${CUSTOM}`,
});
export type UpdateDealBody = Static<typeof UpdateDealBody>;

export const Deal = Type.Object(
  {
    id: Id(),
    name: Type.String(),
    stage: Type.String({ description: 'Key of one of the organization\'s deal stages.' }),
    amount: Nullable(Type.String({ description: AMOUNT_RULES, examples: ['48000.00'] })),
    currency: Nullable(Type.String({ description: 'ISO 4217 code.' })),
    accountId: Nullable(Type.String()),
    leadId: Nullable(Type.String()),
    ownerId: Nullable(Type.String()),
    expectedCloseDate: Nullable(Type.String({ format: 'date-time', description: DATE_RULES, examples: ['2026-03-31T00:00:00.000Z'] })),
    externalId: ExternalIdOutput,
    createdAt: Timestamp('UTC instant of creation.'),
    updatedAt: Timestamp('UTC instant of the last change.'),
    deletedAt: DeletedAt,
  },
  { $id: 'Deal', additionalProperties: true, description: 'Custom deal fields follow the standard ones, flat (null when unset).' },
);
export type Deal = Static<typeof Deal>;

export const ListDealsQuery = Type.Object(
  {
    stage: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Only deals in this stage (an unknown stage is a 400 naming the allowed keys).' })),
    accountId: Type.Optional(Id('Only deals with this account.')),
    ownerId: Type.Optional(Id('Only deals owned by this user.')),
    leadId: Type.Optional(Id('Only deals of this lead.')),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the deal name.' })),
    ...ExternalIdQuery,
    ...ListParams,
    ...SortQuery(NAMED_SORTS),
    ...TrashQuery,
  },
  { additionalProperties: false, patternProperties: FieldFilterParams },
);
export type ListDealsQuery = Static<typeof ListDealsQuery>;

export const DealEnvelope = Envelope(Type.Object({ deal: Type.Ref(Deal) }));
/** The answer of a write of an existing deal (update, delete, restore): the deal, or its minimal view. */
export const WrittenDealEnvelope = WrittenEnvelope('deal', Type.Ref(Deal));
export const DealListEnvelope = Envelope(Type.Object({ deals: Type.Array(Type.Ref(Deal)), pagination: Type.Ref(Pagination) }));
