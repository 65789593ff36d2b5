import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const threadsFor = (env: Record<string, string>) => loadConfig({ ENCRYPTION_KEY, ...env }, () => undefined).httpThreads;

describe('HTTP_THREADS default', () => {
  it('is one thread per core, at most 4, on SQLite', () => {
    expect(threadsFor({ DATABASE_URL: ':memory:' })).toBe(Math.min(availableParallelism(), 4));
  });

  it('is one thread on PostgreSQL, where a second thread costs more CPU per request than it adds', () => {
    expect(threadsFor({ DATABASE_URL: 'postgres://u@127.0.0.1:5432/crm' })).toBe(1);
  });

  it('is whatever HTTP_THREADS says on either', () => {
    expect(threadsFor({ DATABASE_URL: 'postgres://u@127.0.0.1:5432/crm', HTTP_THREADS: '3' })).toBe(3);
  });
});
