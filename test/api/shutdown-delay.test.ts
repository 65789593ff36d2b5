import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { eventually } from '../helpers/receiver.js';
import { databaseEnv, killSpawned, serve, testKey } from '../helpers/processes.js';

/**
 * SHUTDOWN_DELAY_MS, as a real `crm serve` process with one HTTP thread and with two: on SIGTERM `/ready` answers
 * 503 at once in every thread while the API still answers, and only when the delay has passed does the server
 * stop accepting (then it drains and exits 0 as without a delay, http-threads.test.ts).
 */

/** Starts of `crm serve` with a second thread took up to 28 s at a load of 20 on 2 cores (http-threads.test.ts). */
const STARTS_TIMEOUT = 300_000;
const DELAY_MS = 8_000;

let t: TestApp;
let org: Seeded;

beforeAll(async () => {
  t = await buildTestApp({ env: { ENCRYPTION_KEY: testKey() } });
  org = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  killSpawned();
  await t.close();
});

/** One GET on a connection of its own: the status, or the connection error's code (ECONNREFUSED…). */
function get(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status?: number; code?: string; body?: any }> {
  return new Promise((resolve) => {
    const req = httpRequest(`${base}${path}`, { headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(body) }));
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ code: err.code ?? err.message }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ code: err.code ?? err.message }));
    req.end();
  });
}

describe.each(['1', '2'])('SHUTDOWN_DELAY_MS with HTTP_THREADS=%s', (threads) => {
  it('turns /ready to 503 at SIGTERM, serves the API on until the delay has passed, then refuses and exits 0', async () => {
    const server = await serve({ ...databaseEnv(t), HTTP_THREADS: threads, SHUTDOWN_DELAY_MS: String(DELAY_MS) });
    if (threads === '2') await server.waitFor(/serving HTTP from several threads/);
    expect((await get(server.base, '/ready')).status).toBe(200);

    const signalledAt = Date.now();
    server.proc.kill('SIGTERM');
    const notReady = await eventually(async () => {
      const res = await get(server.base, '/ready');
      if (res.status !== 503) throw new Error(`/ready answered ${JSON.stringify(res)}`);
      return res.body;
    });
    expect(notReady).toMatchObject({ status: false, code: 'SERVICE_UNAVAILABLE', message: 'The server is shutting down' });
    // Every thread says so (new connections spread over the threads), and each still serves the API.
    const after = await Promise.all(Array.from({ length: 20 }, () => get(server.base, '/ready')));
    expect(after.map((r) => r.status)).toEqual(Array(20).fill(503));
    const api = await Promise.all(Array.from({ length: 20 }, () => get(server.base, '/api/public/v1/me', org.auth)));
    expect(api.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect((await get(server.base, '/health')).status).toBe(200);

    // Then it stops accepting, never before the delay has passed.
    await eventually(async () => {
      const res = await get(server.base, '/health');
      if (res.code !== 'ECONNREFUSED') throw new Error(`still accepting: ${JSON.stringify(res.status ?? res.code)}`);
    }, DELAY_MS + 60_000, 50);
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(DELAY_MS);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain('not ready: serving until the shutdown delay ends');
  }, STARTS_TIMEOUT);
});
