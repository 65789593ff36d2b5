import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `crm <args>` from the TypeScript sources (no build needed) with the given environment. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    // `node --import tsx` rather than the tsx binary: one process instead of two, about a second less per call.
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'index.ts'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
