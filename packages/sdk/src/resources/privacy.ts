import type { Core } from '../core.js';
import type { CallOptions, Query, RequestBody, ResponseData, Schema } from '../types.js';
import { listing } from './listing.js';

const ERASURES = '/api/public/v1/privacy/erasures';
const SUBJECT = '/api/public/v1/privacy/subject';

export type Erasure = Schema<'Erasure'>;
export type ErasureRequest = RequestBody<typeof ERASURES, 'post'>;
export type ErasureQuery = Query<typeof ERASURES, 'get'>;
export type ErasurePage = ResponseData<typeof ERASURES, 'get'>;
export type SubjectQuery = Query<typeof SUBJECT, 'get'>;
export type SubjectFile = ResponseData<typeof SUBJECT, 'get'>;

/**
 * Erasure (scope privacy:write) and subject export (privacy:read): see docs/privacy.md. Past erasures read like
 * every list: `erasures.list()`, `erasures.pages()`, `erasures.iterate()`, newest first (privacy:read or privacy:write).
 */
export const privacyResource = (core: Core) => ({
  /** Erases for good every lead, account, deal and record holding the e-mail or phone; returns the receipt. Safe to retry. */
  erase: async (body: ErasureRequest, opts?: CallOptions): Promise<Erasure> => (await core.call(ERASURES, 'post', { body }, opts)).erasure,
  /** Everything held about the e-mail or phone, decrypted, and the events naming it (the access-request file). */
  export: async (query: SubjectQuery, opts?: CallOptions): Promise<SubjectFile> => core.call(SUBJECT, 'get', { query }, opts),
  erasures: listing((query: ErasureQuery, opts?: CallOptions): Promise<ErasurePage> => core.call(ERASURES, 'get', { query }, opts), (page) => page.erasures),
});
