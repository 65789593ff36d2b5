/**
 * A scheduler in its own process, for the "several instances on one database" test: it opens the test
 * database, says "ready", waits for "go" on stdin so that every instance starts its tick together, runs one
 * tick at the instant NOW and prints how many reminders it fired.
 */
import { createInterface } from 'node:readline';
import { loadConfig } from '../../src/config.js';
import { closeContext, createContext } from '../../src/context.js';
import { openDatabase } from '../../src/db/database.js';
import { ManualClock } from '../../src/lib/clock.js';
import { runDueReminders } from '../../src/modules/objects/reminders.service.js';

const env = process.env as Record<string, string>;
const config = loadConfig({ DATABASE_URL: env.DATABASE_URL!, ENCRYPTION_KEY: env.ENCRYPTION_KEY!, LOG_LEVEL: 'silent' }, () => undefined);
const database = openDatabase({ ...config.database, ...(env.DB_SCHEMA ? { schema: env.DB_SCHEMA, poolSize: 2 } : {}) });
const ctx = await createContext(config, { database, clock: new ManualClock(env.NOW!), migrate: false });
console.log('ready');
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line.trim() !== 'go') continue;
  console.log(`fired ${await runDueReminders(ctx)}`);
  break;
}
lines.close();
await closeContext(ctx);
