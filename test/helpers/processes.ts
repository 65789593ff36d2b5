import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { BUILT_CLI } from './build-global-setup.js';
import type { TestApp } from './test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Environment that points a spawned `crm` at a test app's database (its schema on PostgreSQL). */
export function databaseEnv(t: TestApp): Record<string, string> {
  let url = t.config.database.url;
  if (t.config.database.dialect === 'postgres') {
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${t.location},public`);
    url = u.toString();
  }
  return { DATABASE_URL: url, ENCRYPTION_KEY: t.config.encryptionKeys[0]! };
}

export const testKey = (): string => randomBytes(32).toString('base64');

export interface Spawned {
  proc: ChildProcess;
  output(): string;
  /** Resolves with the first match of `pattern` in stdout+stderr. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcess>();

/** SIGKILLs every process this test file spawned that is still running (afterAll, also after a failure). */
export function killSpawned(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
}

/** `crm <args> --json` in its own process, awaited: its exit status, everything it printed, and its last line parsed. */
export async function crmJson(args: string[], env: Record<string, string>) {
  const p = crm([...args, '--json'], env);
  const { code } = await p.exited;
  return { code, out: p.output(), json: () => JSON.parse(p.output().trim().split('\n').at(-1)!) };
}

/** `crm <args>` (the run's build, see build-global-setup.ts) in its own process. */
export function crm(args: string[], env: Record<string, string>): Spawned {
  const proc = spawn(process.execPath, [BUILT_CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  let out = '';
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    out += chunk.toString();
    for (const l of listeners) l();
  };
  proc.stdout!.on('data', collect);
  proc.stderr!.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    proc,
    output: () => out,
    exited,
    waitFor: (pattern, timeoutMs = 90_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(pattern);
          if (m) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${out}`));
        }, timeoutMs);
        listeners.add(check);
        void exited.then(() => setTimeout(check, 0));
        check();
      }),
  };
}

/** Starts `crm serve` on a random port and returns its base URL. */
export async function serve(env: Record<string, string>): Promise<Spawned & { base: string }> {
  const s = crm(['serve'], { PORT: '0', ...env });
  const m = await s.waitFor(/listening at (http:\/\/127\.0\.0\.1:\d+)/);
  return { ...s, base: m[1]! };
}
