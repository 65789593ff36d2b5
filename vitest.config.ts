import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Projects: unit tests and the SDK package's own tests once; the black-box API suite (with the examples) on
 * SQLite always and on PostgreSQL (+ Redis) when TEST_DATABASE_URL is set — the same files, so both databases
 * answer to the same contract; the browser tests where Chromium is. Every project `extends` the root config
 * (the @crm/sdk alias).
 */
const api = (dialect: 'sqlite' | 'postgres') => ({
  extends: true as const,
  // Worker threads the app starts run the run's build, as its processes do (test/helpers/built-worker-thread.ts).
  resolve: { alias: [{ find: /^.*\/lib\/worker-thread\.js$/, replacement: fileURLToPath(new URL('./test/helpers/built-worker-thread.ts', import.meta.url)) }] },
  test: {
    name: `api-${dialect}`,
    include: ['test/api/**/*.test.ts', 'examples/**/*.test.ts'],
    env: { TEST_DIALECT: dialect },
    // Processes the tests start run the build, made once per run when the sources are newer (build-global-setup.ts).
    globalSetup: ['test/helpers/native-global-setup.ts', 'test/helpers/build-global-setup.ts', ...(dialect === 'postgres' ? ['test/helpers/pg-global-setup.ts'] : [])],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run one after another in a worker that keeps its loaded modules: loading the app's module graph
    // afresh for every file (vitest's default) cost about 5 s of CPU per file, more than most files' tests. Every
    // file builds its own app and database and closes them, and a file that changes process-wide state (the
    // environment, console spies) puts it back in afterAll.
    isolate: false,
  },
});

/** The admin console in a real Chromium (playwright-core), on SQLite; where Chromium is installed, and always in CI. */
const browser = {
  test: {
    name: 'browser',
    include: ['test/browser/**/*.test.ts'],
    env: { TEST_DIALECT: 'sqlite' },
    globalSetup: ['test/helpers/native-global-setup.ts', 'test/helpers/build-global-setup.ts'],
    // A page flow that takes 10–16 s on an idle machine took up to 24 s in CI beside the API suites: the bound
    // only stops a hung page, every step waits for what it needs.
    testTimeout: 90_000,
    hookTimeout: 60_000,
  },
};

export default defineConfig({
  // Tests and the example import the SDK by its package name, resolved to its source (no build, no install link needed).
  resolve: { alias: { '@crm/sdk': fileURLToPath(new URL('./packages/sdk/src/index.ts', import.meta.url)) } },
  test: {
    pool: 'forks',
    // CI also writes a JSON report, summarised by scripts/test-summary.mjs as a plain closing line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test-results.json' }]] : ['default'],
    maxWorkers: 3,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], globalSetup: ['test/helpers/native-global-setup.ts'], testTimeout: 30_000 } },
      { extends: true, test: { name: 'sdk', include: ['packages/sdk/test/**/*.test.ts'], testTimeout: 30_000 } },
      api('sqlite'),
      ...(process.env.TEST_DATABASE_URL ? [api('postgres')] : []),
      ...(existsSync('/usr/bin/chromium') || process.env.CI ? [browser] : []),
    ],
  },
});
