import { afterAll, beforeAll } from 'vitest';
import { rawConnect, type RawClient } from './raw-socket.js';
import { seedOrg } from './seed.js';
import { buildTestApp, type TestApp } from './test-app.js';

export interface RawServer {
  /** An API key of the organization seeded for the file (set before its tests). */
  key: string;
  /** A raw client of the server, destroyed after the file's tests. */
  connect(opts?: { allowHalfOpen?: boolean }): Promise<RawClient>;
}

/**
 * For a file of raw-socket clients: the app built with `env`, listening on a port of its own, and an
 * organization with a key, made before the file's tests and closed after them.
 */
export function useRawServer(env: Record<string, string>): RawServer {
  let t: TestApp | undefined;
  let port = 0;
  const open: RawClient[] = [];
  const server: RawServer = {
    key: '',
    async connect(opts = {}) {
      const c = await rawConnect(port, opts);
      open.push(c);
      return c;
    },
  };
  beforeAll(async () => {
    t = await buildTestApp({ env });
    server.key = (await seedOrg(t.ctx)).key;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const c of open) c.socket.destroy();
    await t?.close();
  });
  return server;
}
