import { createClient, type CrmClient } from '@crm/sdk';
import { afterAll, beforeAll } from 'vitest';
import { listen } from './mcp.js';
import { seedOrg, type Seeded } from './seed.js';
import { buildTestApp, type TestApp } from './test-app.js';

export interface SdkApp {
  t: TestApp;
  s: Seeded;
  crm: CrmClient;
}

/**
 * For a file that drives the SDK against the real server: a test app on a port of its own, an organization and
 * an SDK client with its key, made before the file's tests (then handed to `ready`) and closed after them.
 */
export function useSdkApp(ready: (app: SdkApp) => void | Promise<void>): void {
  let t: TestApp | undefined;
  beforeAll(async () => {
    t = await buildTestApp();
    const s = await seedOrg(t.ctx);
    await ready({ t, s, crm: createClient({ baseUrl: await listen(t), apiKey: s.key }) });
  });
  afterAll(async () => {
    await t?.close();
  });
}
