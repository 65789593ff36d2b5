import { sealContacts, type ContactCrypto } from '../../crypto/contact-fields.js';
import { newId } from '../../lib/ids.js';
import type { CreateLeadBody } from './leads.schemas.js';
import type { StoredLead } from './leads.store.js';
import type { CustomSealer, NewCustomValues } from '../fields/custom-values.js';

/**
 * A new lead as stored: its contact fields sealed; owner and duplicate are decided when it is stored. An API
 * create also carries its custom values in clear (for its event) and their index entries.
 */
export type NewLead = Omit<StoredLead, 'seq'> & { customValues?: NewCustomValues };

/**
 * The half of a create that needs no database: a new id and the normalized contact fields sealed to it
 * (AES-GCM bound to the row, HMAC blind index). The API runs it just before storing; `crm import` in a
 * worker thread, ahead of the inserts.
 */
export function newLead(
  crypto: ContactCrypto,
  organizationId: string,
  input: CreateLeadBody,
  contacts: { email?: string | null; phoneNumber?: string | null },
  now: Date,
  sealCustom?: CustomSealer,
): NewLead {
  const id = newId(now);
  const custom = sealCustom?.(id);
  const at = now.toISOString();
  return {
    id,
    organizationId,
    name: input.name.trim(),
    ...sealContacts(crypto, { table: 'leads', rowId: id, organizationId }, contacts),
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
