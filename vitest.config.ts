import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

/**
 * Four projects: unit tests once; the black-box API suite on SQLite always and on PostgreSQL (+ Redis)
 * when TEST_DATABASE_URL is set — the same files, so both databases answer to the same contract.
 */
const api = (dialect: 'sqlite' | 'postgres') => ({
  test: {
    name: `api-${dialect}`,
    include: ['test/api/**/*.test.ts'],
    env: { TEST_DIALECT: dialect },
    globalSetup: dialect === 'postgres' ? ['test/helpers/pg-global-setup.ts'] : [],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

/** The admin console in a real Chromium (playwright-core), on SQLite; where Chromium is installed, and always in CI. */
const browser = {
  test: {
    name: 'browser',
    include: ['test/browser/**/*.test.ts'],
    env: { TEST_DIALECT: 'sqlite' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
};

export default defineConfig({
  test: {
    pool: 'forks',
    // CI also writes a JSON report, summarised by scripts/test-summary.mjs as a plain closing line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test-results.json' }]] : ['default'],
    maxWorkers: 3,
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 30_000 } },
      api('sqlite'),
      ...(process.env.TEST_DATABASE_URL ? [api('postgres')] : []),
      ...(existsSync('/usr/bin/chromium') || process.env.CI ? [browser] : []),
    ],
  },
});
