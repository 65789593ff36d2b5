import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { DB } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';
import { runIdempotent } from './idempotency.service.js';
import { requirePrincipal } from '../../http/auth.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A creating POST: honours Idempotency-Key (documented in OpenAPI by this flag). */
    idempotent?: boolean;
  }
}

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 257,
      description: 'Makes a retried create safe: the same key and body replay the first response (Idempotent-Replayed: true) for 24 h; a different body answers 422.',
    }),
  ),
});

/**
 * The shared shape of every creating POST: run `create` in a transaction under the request's
 * Idempotency-Key and answer 201 (or the replayed stored response).
 */
export function createdReply<T>(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, create: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return idempotentReply(ctx, request, reply, 201, create);
}

/**
 * createdReply for a create that is one statement (`oneStatement`, as its service tells): without an
 * Idempotency-Key, PostgreSQL runs it in autocommit, atomic on its own, and spares BEGIN and COMMIT (two round
 * trips of four for a new lead). SQLite keeps its group-committed transaction; a key needs one for its claim.
 */
export async function createdReplyInOneStatement<T>(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, oneStatement: boolean, create: (db: Executor) => Promise<T>): Promise<T> {
  if (!oneStatement || ctx.database.dialect !== 'postgres' || request.headers['idempotency-key'] !== undefined) return createdReply(ctx, request, reply, create);
  const body = await create(ctx.database.db);
  ctx.outbox.notify();
  reply.code(201);
  return body;
}

/** The same for a POST answering another status (a batch: 200, its items carrying their own statuses). */
export async function idempotentReply<T>(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  create: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  const principal = requirePrincipal(request);
  const header = request.headers['idempotency-key'];
  const result = await runIdempotent(
    ctx,
    {
      organizationId: principal.organization.id,
      header: Array.isArray(header) ? header.join(',') : header,
      method: request.method,
      path: request.url.split('?')[0]!,
      body: request.body,
    },
    async (trx) => ({ status, body: await create(trx) }),
  );
  reply.code(result.status);
  if (!result.replayed) return result.body;
  reply.header('idempotent-replayed', 'true');
  return replayable(reply, result.body);
}

/**
 * A stored response, serialized by the route's schema as usual; one stored by an older release that lacks a
 * field the schema now requires (a rolling upgrade, within the key's 24 hours) is sent as it was stored rather
 * than failing the retry with a 500.
 */
function replayable<T>(reply: FastifyReply, body: T): T {
  try {
    reply.serialize(body);
    return body;
  } catch {
    reply.type('application/json; charset=utf-8');
    // A string with a JSON type skips the serializer (Fastify sends it as it is); the handler's type is the body's.
    return JSON.stringify(body) as T;
  }
}
