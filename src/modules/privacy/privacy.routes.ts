import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { callerOf, requirePrincipal } from '../../http/auth.js';
import { ok } from '../../http/schemas.js';
import { ErasureBody, ErasureEnvelope, ErasureListEnvelope, ListErasuresQuery, SubjectEnvelope, SubjectQuery } from './privacy.schemas.js';
import { createdReply, IdempotencyHeaders } from '../idempotency/idempotent-route.js';
import { eraseSubjectWith, listErasures } from './privacy.service.js';
import { exportSubject } from './subject-export.js';

const tags = ['Privacy'];

/** Erasure (GDPR Art. 17) and subject export (Art. 15/20): docs/privacy.md. Their scopes are never implied by others. */
export function registerPrivacyRoutes(parent: FastifyInstance, ctx: AppContext): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/privacy/erasures', {
    config: { auth: { anyOf: ['privacy:write'] }, idempotent: true },
    schema: {
      tags,
      summary: 'Erase a data subject',
      description:
        'Removes for good, in one transaction, every lead, account, deal and custom-object record holding the e-mail or phone ' +
        '(in a standard field or a custom email or phone field; trashed ones too), with the notes and tasks on them and the events, ' +
        'webhook deliveries, stored idempotent responses, reminders and search entries that name them; ' +
        'records lead.erased / account.erased / deal.erased / record.erased (ids only). The receipt keeps the blind index of the value, never the value. ' +
        'Safe to retry: a second erasure of the same value matches nothing. With an Idempotency-Key a retry answers the first receipt ' +
        '(the request is kept only as a keyed hash, the receipt encrypted; neither holds the value).',
      headers: IdempotencyHeaders,
      body: ErasureBody,
      response: { 201: ErasureEnvelope },
    },
    handler: (request, reply) =>
      eraseSubjectWith(ctx, callerOf(request), request.body, (erase) => createdReply(ctx, request, reply, async (trx) => ok({ erasure: await erase(trx) }))),
  });

  app.get('/privacy/erasures', {
    config: { auth: { anyOf: ['privacy:write', 'privacy:read'] } },
    schema: { tags, summary: 'List erasures', description: 'The receipts of past erasures, newest first by default; `sort=createdAt` for oldest first. createdAfter/createdBefore bound `completedAt`, the instant the receipt was written. A receipt never changes, so there is no updatedAt sort or filter. Paged by page/limit or by cursor (pass pagination.nextCursor as after, with the same sort).', querystring: ListErasuresQuery, response: { 200: ErasureListEnvelope } },
    handler: async (request) => ok(await listErasures(ctx, requirePrincipal(request).organization.id, request.query)),
  });

  app.get('/privacy/subject', {
    config: { auth: { anyOf: ['privacy:read'] } },
    schema: {
      tags,
      summary: 'Export a data subject',
      description:
        'The access-request file: every lead, account, deal and record holding the e-mail or phone (send one or both; in a standard ' +
        'field or a custom email or phone field), trashed ones included, decrypted with their custom values, the notes and tasks on them, ' +
        'and the events naming them (ids, types, times; not bodies). Query values are never logged.',
      querystring: SubjectQuery,
      response: { 200: SubjectEnvelope },
    },
    handler: async (request) => ok(await exportSubject(ctx, requirePrincipal(request).organization.id, request.query)),
  });
}
