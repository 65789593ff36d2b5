import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig, loadDatabaseConfig, type Config } from '../config.js';
import { closeContext, createContext, type AppContext } from '../context.js';
import { describeFailure } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Actor } from '../modules/orgs/principal.js';

/** Who a change made from the command line is recorded as (an erasure's receipt, events: *.erased, deal.stage_changed). */
export const CLI_ACTOR: Actor = { type: 'SYSTEM', id: 'cli', channel: 'API' };

export interface Output {
  json: boolean;
  /** Prints `data` as JSON with --json, else the human line. */
  print(data: unknown, human: string): void;
}

function outputOf(args: unknown[]): Output {
  const command = args[args.length - 1] as Command;
  const json = Boolean(command.optsWithGlobals().json);
  return { json, print: (data, human) => console.log(json ? JSON.stringify(data) : human) };
}

/** Prints a failure as one line (or the error envelope with --json) and sets the exit code. */
function report(err: unknown, json: boolean): void {
  process.exitCode = 1;
  if (err instanceof AppError) {
    // A single field's error is the message already (validationFailed): listed again below it, it read twice.
    const detail = err.errors
      ?.map((e) => `${e.field}: ${e.message}`)
      .filter((line) => line !== err.message)
      .map((line) => `  ${line}`)
      .join('\n');
    if (json) console.log(JSON.stringify({ status: false, code: err.code, message: err.message, errors: err.errors }));
    else console.error(`error: ${err.message}${detail ? `\n${detail}` : ''}`);
  } else {
    console.error(`error: ${describeFailure(err)}`);
  }
}

/**
 * A command that works on existing data must not create (and migrate) an empty SQLite file: with a wrong
 * DATABASE_URL or working directory it would then report a valid key as invalid, or an organization as
 * unknown. Checked before the configuration is loaded, which may write an encryption key beside the file.
 * PostgreSQL databases are never created by the CLI, so only SQLite needs the check.
 */
export function requireExistingDatabase(database: Config['database']): void {
  if (database.dialect !== 'sqlite' || database.url === ':memory:' || existsSync(database.url)) return;
  throw new AppError(
    'SERVICE_UNAVAILABLE',
    `No database at ${resolve(database.url)}: set DATABASE_URL to the server's database (run from its directory if it is relative), or create one with \`crm migrate\``,
  );
}

/**
 * Runs one CLI action with a context built from the environment (migrated database, key ring), prints
 * errors as one line (or the error envelope with --json) and always closes the database. The SQLite file
 * must exist unless `createsDatabase` (org create: the first step of a fresh install).
 */
export function action<A extends unknown[]>(fn: (ctx: AppContext, out: Output, ...args: A) => Promise<void>, opts: { createsDatabase?: boolean } = {}) {
  return async (...args: A) => {
    const out = outputOf(args);
    let ctx: AppContext | undefined;
    try {
      if (!opts.createsDatabase) requireExistingDatabase(loadDatabaseConfig(process.env));
      ctx = await createContext(loadConfig(process.env, (m) => (out.json ? undefined : console.error(`warning: ${m}`))));
      await fn(ctx, out, ...args);
    } catch (err) {
      report(err, out.json);
    } finally {
      if (ctx) await closeContext(ctx);
    }
  };
}

/** An action that must not open the database through a context (backup, restore): output and errors only. */
export function bareAction<A extends unknown[]>(fn: (out: Output, ...args: A) => Promise<void> | void) {
  return async (...args: A) => {
    const out = outputOf(args);
    try {
      await fn(out, ...args);
    } catch (err) {
      report(err, out.json);
    }
  };
}

/** `90d`, `12h`, `30m` → an ISO instant that far from now. */
export function parseExpiresIn(value: string, now: Date): string {
  const match = /^(\d+)([dhm])$/.exec(value.trim());
  if (!match) throw new AppError('VALIDATION_FAILED', '--expires-in must look like 90d, 12h or 30m');
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[match[2] as 'd' | 'h' | 'm'];
  return new Date(now.getTime() + Number(match[1]) * unit).toISOString();
}
