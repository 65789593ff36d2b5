import type { Transaction } from 'kysely';
import type { Database } from './database.js';
import type { DB } from './schema.js';

/**
 * Every write that records events goes through here: one transaction for the change and its outbox rows,
 * then the in-process dispatcher is woken once the commit is durable.
 */
export async function inTransaction<T>(ctx: { database: Pick<Database, 'transaction'>; outbox: { notify(): void } }, fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  const result = await ctx.database.transaction(fn);
  ctx.outbox.notify();
  return result;
}
