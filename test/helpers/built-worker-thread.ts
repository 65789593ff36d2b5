import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * Stands in for src/lib/worker-thread.ts in the API tests (vitest.config.ts aliases it): a worker thread the app
 * starts from its TypeScript sources runs the run's build of its module (dist/, rebuilt when a source is newer:
 * build-global-setup.ts), as the `crm` processes the tests start do. Registering tsx inside every worker instead
 * cost about 0.5 s of CPU per thread (an import's CSV worker) over loading the built module.
 */
export function startWorker(callerUrl: string, name: string, workerData: unknown): Worker {
  const source = fileURLToPath(new URL(`./${name}.ts`, callerUrl));
  return new Worker(pathToFileURL(join(ROOT, 'dist', relative(ROOT, source)).replace(/\.ts$/, '.js')), { workerData });
}
