import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
/** The build's entry point for every `crm` a test starts (helpers/cli.ts, processes.ts, server-process.ts). */
export const BUILT_CLI = join(ROOT, 'dist', 'src', 'cli', 'index.js');

const newestSource = (dir: string): number =>
  Math.max(0, ...readdirSync(dir, { withFileTypes: true }).map((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs;
  }));

/**
 * Processes the tests start run the built code, one build shared by every test file: a child started from the
 * TypeScript sources (`node --import tsx`) spent about 1.5 s of CPU more on compiling and loading than the built
 * one, and so did every worker thread it started. `npm test` builds first; a run of single files rebuilds here
 * when a source is newer than the build, so no test runs stale code. Type errors do not stop the run (tsc still
 * emits; `npm run typecheck` reports them).
 */
export default function setup(): void {
  if (existsSync(BUILT_CLI) && statSync(BUILT_CLI).mtimeMs >= newestSource(join(ROOT, 'src'))) return;
  try {
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  } catch (err) {
    if (!existsSync(BUILT_CLI)) throw err;
  }
}
