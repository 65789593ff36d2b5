import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';

/**
 * Unversioned, unauthenticated probes: liveness, and readiness (the database answers, so does Redis when the rate limit lives there, and the server is not
 * shutting down: `stopping`, so that a load balancer stops sending it requests before it stops accepting them).
 */
export function registerHealthRoutes(app: FastifyInstance, ctx: AppContext, stopping: () => boolean = () => false): void {
  app.get('/health', { schema: { hide: true } }, async () => ({ status: true, code: 'SUCCESS', data: { status: 'ok' } }));
  app.get('/ready', { schema: { hide: true } }, async () => {
    if (stopping()) throw new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down');
    try {
      await sql`select 1`.execute(ctx.database.db);
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', 'The database is not reachable');
    }
    await ctx.rateLimiter.ready?.();
    return { status: true, code: 'SUCCESS', data: { status: 'ready' } };
  });
}
