import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { BUILT_CLI } from './build-global-setup.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** A port that was free a moment ago (the server binds it itself; the same port is reused across restarts). */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

export interface CrmProcess {
  child: ChildProcess;
  /** Everything it wrote to stderr (startup failures). */
  errors(): string;
  /** Sends the signal and resolves when the process has exited. */
  stop(signal: NodeJS.Signals): Promise<void>;
}

/** `crm <args>` (the run's build, see build-global-setup.ts) as its own process, with exactly the given environment. */
export function spawnCrm(args: string[], env: Record<string, string>): CrmProcess {
  const child = spawn(process.execPath, [BUILT_CLI, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const exited = once(child, 'exit');
  return {
    child,
    errors: () => stderr,
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** Polls until the server answers /health (a start on a busy machine takes seconds). */
export async function waitUntilServing(url: string, proc: CrmProcess, timeoutMs = 90_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (proc.child.exitCode !== null) throw new Error(`crm exited early: ${proc.errors()}`);
    try {
      if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(1_000) })).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up: ${proc.errors()}`);
}
