import { BLIND_INDEX_KEY_COLUMNS } from '../../crypto/blind-index-key.store.js';
import type { EncryptedColumn } from '../../crypto/encrypted-column.js';
import { ACCOUNT_ENCRYPTED_COLUMNS } from '../accounts/accounts.store.js';
import { IDEMPOTENCY_ENCRYPTED_COLUMNS } from '../idempotency/idempotency.store.js';
import { RECORD_ENCRYPTED_COLUMNS } from '../objects/records.encryption.js';
import { LEAD_ENCRYPTED_COLUMNS } from '../leads/leads.store.js';
import { WEBHOOK_ENCRYPTED_COLUMNS } from '../webhooks/webhook-secrets.js';
import { USER_ENCRYPTED_COLUMNS } from '../orgs/users.store.js';
import { NOTE_ENCRYPTED_COLUMNS } from '../notes/notes.store.js';
import { CUSTOM_FIELD_ENCRYPTED_COLUMNS } from '../fields/custom-fields.encryption.js';

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
  ...CUSTOM_FIELD_ENCRYPTED_COLUMNS,
];
