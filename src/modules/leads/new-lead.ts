import { normalizeContacts, sealContacts, type ContactCrypto, type SealedContacts } from '../../crypto/contact-fields.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { CreateLeadBody } from './leads.schemas.js';
import type { StoredLead } from './leads.store.js';
import { BUILTIN } from '../fields/builtin-resources.js';
import { customSealer, parseCustomInput, type CustomFields, type CustomSealer, type NewCustomValues } from '../fields/custom-values.js';

/**
 * A new lead as stored: its contact fields sealed; owner and duplicate are decided when it is stored. An API
 * create also carries its custom values in clear (for its event) and their index entries.
 */
export type NewLead = Omit<StoredLead, 'seq'> & { customValues?: NewCustomValues };

/**
 * The half of a create that needs no database: a new id and the normalized contact fields sealed to it
 * (AES-GCM bound to the row, HMAC blind index). The API runs it just before storing; `crm import` in a
 * worker thread, ahead of the inserts. `sealed`: the id and contacts already sealed to it (a batch's, partly
 * on a worker thread: contact-seal-thread.ts).
 */
export function newLead(
  crypto: ContactCrypto,
  organizationId: string,
  input: CreateLeadBody,
  contacts: { email?: string | null; phoneNumber?: string | null },
  now: Date,
  sealCustom?: CustomSealer,
  sealed?: { id: string; contacts: SealedContacts },
): NewLead {
  const id = sealed?.id ?? newId(now);
  const custom = sealCustom?.(id);
  const at = now.toISOString();
  return {
    id,
    organizationId,
    name: input.name.trim(),
    ...(sealed?.contacts ?? sealContacts(crypto, { table: 'leads', rowId: id, organizationId }, contacts)),
    source: input.source ?? null,
    sourceCampaign: input.sourceCampaign ?? null,
    status: input.status ?? 'NEW',
    company: input.company ?? null,
    title: input.title ?? null,
    notes: input.notes ?? null,
    ownerId: input.ownerId ?? null,
    accountId: input.accountId ?? null,
    duplicateOf: null,
    externalId: input.externalId ?? null,
    custom: custom?.json ?? null,
    customValues: custom?.values,
    createdAt: at,
    updatedAt: at,
    deletedAt: null,
  };
}

/** New leads ready to store: ids, normalized and sealed contact fields (refused here if invalid), time, the lead fields they were parsed against. */
export interface PreparedLeads {
  custom: CustomFields;
  rows: NewLead[];
  contacts: { email?: string | null; phoneNumber?: string | null }[];
  now: Date;
}

/** A new lead's input checked against the lead fields and its contacts normalized (refused here if invalid), with its id. */
export interface ParsedLead {
  input: CreateLeadBody;
  id: string;
  custom: ReturnType<typeof parseCustomInput>;
  contacts: { email?: string | null; phoneNumber?: string | null };
}

export function parseNewLead(c: CustomFields, input: CreateLeadBody, now: Date): ParsedLead {
  const custom = parseCustomInput(c.definition, input, BUILTIN.leads.writable, BUILTIN.leads.readOnly, 'create');
  return { input, id: newId(now), custom, contacts: normalizeContacts(input) };
}

/** A parsed lead ready to store, its contacts sealed to its id (`sealed`) or here. */
export function preparedLead(crypto: ContactCrypto, c: CustomFields, parsed: ParsedLead, now: Date, sealed?: SealedContacts): PreparedLeads {
  const sealer = c.definition.fields.length ? customSealer(crypto, c, parsed.custom) : undefined;
  const contacts = sealed ?? sealContacts(crypto, { table: 'leads', rowId: parsed.id, organizationId: c.organizationId }, parsed.contacts);
  const row = newLead(crypto, c.organizationId, parsed.input, parsed.contacts, now, sealer, { id: parsed.id, contacts });
  return { custom: c, rows: [row], contacts: [parsed.contacts], now };
}

/**
 * The part of a create that needs no database: phone parsing, encryption, blind indexes. The API does it
 * before its transaction, so that on SQLite it doesn't hold the one writer's lock meanwhile.
 */
export function prepareLeads(ctx: ContactCrypto & { clock: Clock }, c: CustomFields, inputs: readonly CreateLeadBody[]): PreparedLeads {
  const now = ctx.clock.now();
  const each = inputs.map((input) => preparedLead(ctx, c, parseNewLead(c, input, now), now));
  return { custom: c, rows: each.flatMap((p) => p.rows), contacts: each.flatMap((p) => p.contacts), now };
}
