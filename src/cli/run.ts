import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { closeContext, createContext, type AppContext } from '../context.js';
import { AppError } from '../errors.js';

export interface Output {
  json: boolean;
  /** Prints `data` as JSON with --json, else the human line. */
  print(data: unknown, human: string): void;
}

/**
 * Runs one CLI action with a context built from the environment (migrated database, key ring), prints
 * errors as one line (or the error envelope with --json) and always closes the database.
 */
export function action<A extends unknown[]>(fn: (ctx: AppContext, out: Output, ...args: A) => Promise<void>) {
  return async (...args: A) => {
    const command = args[args.length - 1] as Command;
    const json = Boolean(command.optsWithGlobals().json);
    const out: Output = { json, print: (data, human) => console.log(json ? JSON.stringify(data) : human) };
    let ctx: AppContext | undefined;
    try {
      ctx = await createContext(loadConfig(process.env, (m) => (json ? undefined : console.error(`warning: ${m}`))));
      await fn(ctx, out, ...args);
    } catch (err) {
      process.exitCode = 1;
      if (err instanceof AppError) {
        const detail = err.errors?.map((e) => `  ${e.field}: ${e.message}`).join('\n');
        if (json) console.log(JSON.stringify({ status: false, code: err.code, message: err.message, errors: err.errors }));
        else console.error(`error: ${err.message}${detail ? `\n${detail}` : ''}`);
      } else {
        console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
      }
    } finally {
      if (ctx) await closeContext(ctx);
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
