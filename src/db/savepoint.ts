import { sql } from 'kysely';
import type { Executor } from './database.js';

/**
 * Runs `fn` inside a savepoint of the caller's transaction: if it throws, what it wrote is rolled back alone
 * and the transaction goes on (on PostgreSQL a failed statement would otherwise abort all of it). The same
 * statements on both databases; savepoints nest, so this also works inside SQLite's group commit units.
 */
export async function inSavepoint<T>(trx: Executor, fn: () => Promise<T>): Promise<T> {
  await sql`savepoint batch_item`.execute(trx);
  try {
    const value = await fn();
    await sql`release batch_item`.execute(trx);
    return value;
  } catch (err) {
    await sql`rollback to batch_item`.execute(trx);
    await sql`release batch_item`.execute(trx);
    throw err;
  }
}
