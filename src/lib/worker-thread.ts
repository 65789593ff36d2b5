import { Worker } from 'node:worker_threads';

/**
 * Starts the module `name` next to `callerUrl` (the caller's `import.meta.url`) in a worker thread. Built code
 * (dist/) runs the `.js` module as is. From the TypeScript sources (`tsx`, scripts) the `.ts` module is loaded
 * after registering tsx inside the worker, because a worker does not inherit its parent's module loader. (The
 * API tests replace this module with one that starts the built worker: test/helpers/built-worker-thread.ts.)
 */
export function startWorker(callerUrl: string, name: string, workerData: unknown): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl), { workerData });
  const moduleUrl = new URL(`./${name}.ts`, callerUrl).href;
  const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(moduleUrl)}); });`;
  return new Worker(boot, { eval: true, workerData });
}
