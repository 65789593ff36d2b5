import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * The SQLite extension every database file is opened with (src/db/wal-buffer.ts): `npm test` builds it first; a
 * run of single files compiles it here when it is missing or older than its source.
 */
export default function setup(): void {
  const extension = join(ROOT, 'native', 'build', 'wal-buffer.so');
  if (existsSync(extension) && statSync(extension).mtimeMs >= statSync(join(ROOT, 'native', 'wal-buffer.c')).mtimeMs) return;
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-native.mjs')], { cwd: ROOT, stdio: 'inherit' });
}
