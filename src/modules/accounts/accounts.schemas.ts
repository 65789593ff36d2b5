import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Id, Nullable, Timestamp } from '../../http/schemas.js';
import { Pagination } from '../../lib/pagination.js';
import { ListParams, NAMED_SORTS, SortQuery } from '../../lib/list-request.js';
import { DeletedAt, TrashQuery } from '../shared/trash.routes.js';
import { FieldFilterParams } from '../objects/records.schemas.js';
import { ExternalIdInput, ExternalIdOutput, ExternalIdQuery } from '../shared/external-id.js';
import { WrittenEnvelope } from '../shared/minimal-view.js';

const text = (max: number, description: string) => Type.String({ maxLength: max, description });

const writable = {
  domain: Nullable(
    Type.String({
      maxLength: 253,
      pattern: '^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$',
      description: 'Primary web domain (example.com), stored lower-cased.',
    }),
  ),
  email: Nullable(Type.String({ format: 'email', maxLength: 254, description: 'Validated, stored lower-cased and trimmed, encrypted at rest; exact match in search.' })),
  phoneNumber: Nullable(Type.String({ format: 'phone', maxLength: 40, description: 'International format with the country code; stored and returned as E.164 (+14155550100), encrypted at rest.' })),
  industry: Nullable(text(200, 'Industry, free text.')),
  website: Nullable(Type.String({ format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+', maxLength: 2048, description: 'An absolute http or https URL.' })),
  ownerId: Nullable(Id('User id of the owner.')),
  externalId: ExternalIdInput,
};

const name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Company name.' });

/** Custom fields (PATCH /objects/accounts) sit beside the standard ones; the service checks them (unknown keys are 400). */
const CUSTOM = 'Also the organization\'s custom account fields, by key (its own OpenAPI document types them); other keys are refused.';

export const CreateAccountBody = Type.Composite([Type.Object({ name }), Type.Partial(Type.Object(writable))], {
  additionalProperties: true,
  description: CUSTOM,
  examples: [{ name: 'Analytical Engines Ltd', domain: 'analytical.example', email: 'hello@analytical.example', phoneNumber: '+442079460958', industry: 'Computing', website: 'https://analytical.example' }],
});
export type CreateAccountBody = Static<typeof CreateAccountBody>;

export const UpdateAccountBody = Type.Partial(Type.Object({ name, ...writable }), {
  additionalProperties: true,
  minProperties: 1,
  description: `Only the fields sent change; null clears an optional field. ${CUSTOM}`,
});
export type UpdateAccountBody = Static<typeof UpdateAccountBody>;

export const Account = Type.Object(
  {
    id: Id(),
    name: Type.String(),
    domain: Nullable(Type.String()),
    email: Nullable(Type.String()),
    phoneNumber: Nullable(Type.String()),
    industry: Nullable(Type.String()),
    website: Nullable(Type.String()),
    ownerId: Nullable(Type.String()),
    externalId: ExternalIdOutput,
    createdAt: Timestamp('UTC instant of creation.'),
    updatedAt: Timestamp('UTC instant of the last change.'),
    deletedAt: DeletedAt,
  },
  { $id: 'Account', additionalProperties: true, description: 'Custom account fields follow the standard ones, flat (null when unset).' },
);
export type Account = Static<typeof Account>;

export const ListAccountsQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'An e-mail or phone (with country code) → exact match; otherwise a case-insensitive substring of the name.' })),
    ...ExternalIdQuery,
    ownerId: Type.Optional(Id('Only accounts owned by this user.')),
    ...ListParams,
    ...SortQuery(NAMED_SORTS),
    ...TrashQuery,
  },
  { additionalProperties: false, patternProperties: FieldFilterParams },
);
export type ListAccountsQuery = Static<typeof ListAccountsQuery>;

export const AccountEnvelope = Envelope(Type.Object({ account: Type.Ref(Account) }));
/** The answer of a write of an existing account (update, delete, restore): the account, or its minimal view. */
export const WrittenAccountEnvelope = WrittenEnvelope('account', Type.Ref(Account));
export const AccountListEnvelope = Envelope(Type.Object({ accounts: Type.Array(Type.Ref(Account)), pagination: Type.Ref(Pagination) }));
