// Compiles native/wal-buffer.c, the SQLite extension src/db/wal-buffer.ts loads, into native/build/. Part of
// `npm run build`; it needs only a C compiler, which better-sqlite3's own install needs too, and the SQLite
// headers better-sqlite3 ships (the extension must match the SQLite it is loaded into).
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

if (process.platform === 'win32') process.exit(0); // the shim wraps SQLite's "unix" VFS; Windows runs without it

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const headers = join(dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json')), 'deps', 'sqlite3');
const out = join(root, 'native', 'build', 'wal-buffer.so');
const partial = `${out}.${process.pid}`;
const args = ['-O2', '-Wall', '-Werror', '-Wno-unused-parameter', '-shared', '-fPIC', '-I', headers, '-o', partial];
mkdirSync(dirname(out), { recursive: true });

const compilers = [['cc'], ['gcc'], ['g++', '-x', 'c']];
const failures = [];
for (const [cmd, ...lang] of compilers) {
  try {
    execFileSync(cmd, [...lang, ...args, join(root, 'native', 'wal-buffer.c')], { stdio: ['ignore', 'inherit', 'pipe'] });
    renameSync(partial, out); // atomically: a test process may be loading the previous build
    process.exit(0);
  } catch (err) {
    failures.push(`${cmd}: ${err.code === 'ENOENT' ? 'not installed' : String(err.stderr ?? err.message).trim()}`);
  }
}
if (failures.every((f) => f.endsWith('not installed'))) {
  // The server runs without it (src/db/wal-buffer.ts), only slower at writing; it says so when it starts.
  console.warn('no C compiler (cc, gcc or g++): native/wal-buffer.c not built; SQLite runs without its WAL write buffer');
  process.exit(0);
}
console.error(`could not compile native/wal-buffer.c:\n${failures.join('\n')}`);
process.exit(1);
