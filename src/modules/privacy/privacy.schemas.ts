import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Id, Nullable, Timestamp } from '../../http/schemas.js';
import { PageQuery, Pagination } from '../../lib/pagination.js';
import { AfterQuery, CREATION_SORTS, CreatedRangeQuery, SortQuery } from '../../lib/list-request.js';
import { Account } from '../accounts/accounts.schemas.js';
import { Deal } from '../deals/deals.schemas.js';
import { Lead } from '../leads/leads.schemas.js';
import { ObjectRecord } from '../objects/records.schemas.js';
import { Note } from '../notes/notes.schemas.js';
import { Task } from '../tasks/tasks.schemas.js';

const email = Type.String({ format: 'email', maxLength: 254, description: 'The e-mail, matched exactly as lead e-mails are (trimmed, lower-cased) through the blind index.' });
const phoneNumber = Type.String({ format: 'phone', maxLength: 40, description: 'The phone in international format; matched on its E.164 form through the blind index.' });

export const ErasureBody = Type.Object(
  {
    email: Type.Optional(email),
    phoneNumber: Type.Optional(phoneNumber),
    reason: Type.Optional(Type.String({ maxLength: 500, description: 'Why (a ticket reference, "GDPR Art. 17 request"). Kept with the receipt, in clear: put no personal data here (one repeating the e-mail or phone being erased is refused).' })),
  },
  { additionalProperties: false, examples: [{ email: 'ada@example.com', reason: 'Art. 17 request #1042' }], description: 'At least one of email and phoneNumber.' },
);
export type ErasureBody = Static<typeof ErasureBody>;

export const SubjectQuery = Type.Object({ email: Type.Optional(email), phoneNumber: Type.Optional(phoneNumber) }, { additionalProperties: false });
export type SubjectQuery = Static<typeof SubjectQuery>;

export const Erasure = Type.Object(
  {
    id: Id(),
    status: Type.Literal('completed', { description: 'An erasure runs in one transaction: it is complete when answered, or did not happen.' }),
    matched: Type.Object(
      { leads: Type.Integer(), accounts: Type.Integer(), deals: Type.Integer({ description: 'Deals holding the value in a custom email or phone field (0 on receipts from before deals were erased).' }), records: Type.Integer() },
      { description: 'How many items held the value and were removed for good (trashed ones included).' },
    ),
    reason: Nullable(Type.String()),
    requestedAt: Timestamp('UTC instant the erasure was asked for.'),
    completedAt: Timestamp('UTC instant its transaction finished.'),
  },
  { $id: 'Erasure', description: 'The receipt of an erasure. It keeps only the blind index of the value (never the value) and the counts.' },
);
export type Erasure = Static<typeof Erasure>;

export const ErasureEnvelope = Envelope(Type.Object({ erasure: Type.Ref(Erasure) }));
export const ListErasuresQuery = Type.Object({ ...PageQuery, ...AfterQuery, ...CreatedRangeQuery, ...SortQuery(CREATION_SORTS) }, { additionalProperties: false });
export type ListErasuresQuery = Static<typeof ListErasuresQuery>;
export const ErasureListEnvelope = Envelope(Type.Object({ erasures: Type.Array(Type.Ref(Erasure)), pagination: Type.Ref(Pagination) }));

const EventRef = Type.Object({
  id: Type.String(),
  type: Type.String(),
  object: Type.String(),
  objectId: Type.String(),
  createdAt: Timestamp('When the event happened.'),
});

export const SubjectEnvelope = Envelope(
  Type.Object({
    leads: Type.Array(Type.Ref(Lead), { description: 'Leads holding the value (in a standard or custom field), decrypted with their custom values, trashed ones included.' }),
    accounts: Type.Array(Type.Ref(Account), { description: 'Accounts holding the value, likewise.' }),
    deals: Type.Array(Type.Ref(Deal), { description: 'Deals holding the value in a custom email or phone field, likewise.' }),
    records: Type.Array(Type.Ref(ObjectRecord), { description: 'Custom-object records with an email or phone field holding the value.' }),
    notes: Type.Array(Type.Ref(Note), { description: 'The notes on these items (trashed ones included), decrypted.' }),
    tasks: Type.Array(Type.Ref(Task), { description: 'The tasks on these items (trashed ones included).' }),
    events: Type.Array(EventRef, { description: 'The events that name these items and their notes and tasks, oldest first: ids, types and times only.' }),
  }),
);
