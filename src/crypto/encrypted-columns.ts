import { BLIND_INDEX_KEY_COLUMNS } from './blind-index-key.store.js';
import type { EncryptedColumn } from './encrypted-column.js';
import { ACCOUNT_ENCRYPTED_COLUMNS } from '../modules/accounts/accounts.store.js';
import { IDEMPOTENCY_ENCRYPTED_COLUMNS } from '../modules/idempotency/idempotency.store.js';
import { RECORD_ENCRYPTED_COLUMNS } from '../modules/objects/records.encryption.js';
import { LEAD_ENCRYPTED_COLUMNS } from '../modules/leads/leads.store.js';
import { WEBHOOK_ENCRYPTED_COLUMNS } from '../modules/webhooks/webhook-secrets.js';
import { USER_ENCRYPTED_COLUMNS } from '../modules/orgs/users.store.js';
import { NOTE_ENCRYPTED_COLUMNS } from '../modules/notes/notes.store.js';

/** Every column sealed by the field cipher, as each module declares it: one line per module. */
export const ENCRYPTED_COLUMNS: readonly EncryptedColumn[] = [
  ...BLIND_INDEX_KEY_COLUMNS,
  ...USER_ENCRYPTED_COLUMNS,
  ...LEAD_ENCRYPTED_COLUMNS,
  ...ACCOUNT_ENCRYPTED_COLUMNS,
  ...RECORD_ENCRYPTED_COLUMNS,
  ...IDEMPOTENCY_ENCRYPTED_COLUMNS,
  ...WEBHOOK_ENCRYPTED_COLUMNS,
  ...NOTE_ENCRYPTED_COLUMNS,
];
