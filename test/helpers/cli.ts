import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { BUILT_CLI } from './build-global-setup.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CLI = [process.execPath, BUILT_CLI];
const BIN = join(ROOT, 'bin', 'crm.js');

/** A child's environment: only what it is given, plus PATH and HOME. */
const childEnv = (env: Record<string, string>) => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env });

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], env: Record<string, string>, onStdout?: (stdout: string, stdin: NodeJS.WritableStream) => void, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: childEnv(env),
      stdio: [input === undefined && !onStdout ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c) => {
      stdout += c;
      onStdout?.(stdout, child.stdin!);
    });
    child.stderr!.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (input !== undefined) child.stdin!.end(input);
  });
}

/**
 * Runs `crm <args>` (the build the run shares, see build-global-setup.ts) in one process, without the binary's
 * import child, with the given environment; `input` is piped to its standard input (none otherwise).
 */
export function runCli(args: string[], env: Record<string, string>, opts: { input?: string } = {}): Promise<CliResult> {
  return run(CLI[0]!, [...CLI.slice(1), ...args], env, undefined, opts.input);
}

/** Runs the installed binary, `bin/crm.js`, which runs the built code (dist/: `npm test` builds it first). */
export function runBin(args: string[], env: Record<string, string>): Promise<CliResult> {
  return run(process.execPath, [BIN, ...args], env);
}

/** Starts the installed binary without waiting for it (to signal it meanwhile); its output is discarded. */
export function startBin(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv(env), stdio: 'ignore' });
}

/**
 * Runs `crm <args>` on a pseudo-terminal (util-linux `script`), typing each answer once the output ends
 * with its prompt, as a person would. `stdout` is everything the terminal showed (prompts, echo, output).
 */
export function runCliOnTerminal(args: string[], env: Record<string, string>, answers: { prompt: string; type: string }[]): Promise<CliResult> {
  const quoted = [...CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  let next = 0;
  return run('script', ['--quiet', '--return', '--command', quoted, '/dev/null'], env, (shown, stdin) => {
    const answer = answers[next];
    if (answer && shown.endsWith(answer.prompt)) {
      next += 1;
      stdin.write(answer.type);
    }
  });
}
