#!/usr/bin/env node
import { spawn } from 'node:child_process';

/**
 * `crm import` keeps each 10,000-row batch alive on the main thread while it is stored. With V8's default young
 * generation a batch outlives two scavenges, which copy it and promote it to the old generation before it dies;
 * with 64 MB semi-spaces it dies young (less GC work, about +7 % rows/s, docs/import.md). V8 reads the size only
 * when the process starts, so an import runs in a child process started with it.
 */
const IMPORT_HEAP = '--max-semi-space-size=64';
const args = process.argv.slice(2);
const command = args.find((arg) => !arg.startsWith('-'));

if (command === 'import' && !process.execArgv.some((arg) => arg.startsWith('--max-semi-space-size'))) {
  const child = spawn(process.execPath, [...process.execArgv, IMPORT_HEAP, process.argv[1], ...args], { stdio: 'inherit' });
  const forward = (signal) => child.kill(signal);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code);
    process.off(signal, forward);
    process.kill(process.pid, signal);
  });
} else {
  import('../dist/src/cli/index.js').catch((err) => {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/src/cli')) {
      console.error('crm is not built yet: run `npm run build` (npm start and npm test build it too).');
      process.exit(1);
    }
    throw err;
  });
}
