import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';

/** Unversioned, unauthenticated probes: liveness, and readiness (the database answers). */
export function registerHealthRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/health', { schema: { hide: true } }, async () => ({ status: true, code: 'SUCCESS', data: { status: 'ok' } }));
  app.get('/ready', { schema: { hide: true } }, async () => {
    try {
      await sql`select 1`.execute(ctx.database.db);
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', 'The database is not reachable');
    }
    return { status: true, code: 'SUCCESS', data: { status: 'ready' } };
  });
}
