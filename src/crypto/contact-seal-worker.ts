import { parentPort, workerData } from 'node:worker_threads';
import { createBlindIndex } from './blind-index.js';
import { sealContacts } from './contact-fields.js';
import { createFieldCipher } from './field-cipher.js';

/**
 * The worker thread of contact-seal-thread.ts: seals contact fields (AES-GCM bound to their row, HMAC blind
 * index) exactly as sealContacts does on the thread that asks. Plain strings in and out, which cost little to
 * pass between threads. No database, and no plaintext kept (the cipher has no cache).
 */

/** What the worker is started with. The keys only ever reach the cipher and the blind index. */
export interface SealWorkerData {
  keys: { encryption: readonly string[]; blindIndex: Uint8Array };
}

/** Rows to seal: `values` holds, row after row, its id, e-mail and phone number (normalized, or null). */
export interface SealRequest {
  id: number;
  table: string;
  organizationId: string;
  values: (string | null)[];
}

/** Row after row: e-mail ciphertext and blind index, phone ciphertext and blind index. */
export type SealReply = { id: number; sealed: (string | null)[] } | { id: number; failure: string };

const { keys } = workerData as SealWorkerData;
const crypto = { cipher: createFieldCipher(keys.encryption), blindIndex: createBlindIndex(Buffer.from(keys.blindIndex)) };
const port = parentPort!;

function seal(request: SealRequest): (string | null)[] {
  const { table, organizationId, values } = request;
  const sealed: (string | null)[] = [];
  for (let i = 0; i < values.length; i += 3) {
    const s = sealContacts(crypto, { table, rowId: values[i]!, organizationId }, { email: values[i + 1], phoneNumber: values[i + 2] });
    sealed.push(s.emailEnc, s.emailBidx, s.phoneEnc, s.phoneBidx);
  }
  return sealed;
}

port.on('message', (request: SealRequest) => {
  let reply: SealReply;
  try {
    reply = { id: request.id, sealed: seal(request) };
  } catch (err) {
    reply = { id: request.id, failure: String((err as Error)?.message ?? err) };
  }
  port.postMessage(reply);
});
