import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { API } from '../helpers/http.js';

/** Requests logged at debug level never contain the key, an e-mail or a phone number. */
describe('logs', () => {
  let t: TestApp;
  let s: Seeded;
  const lines: string[] = [];
  let app: Awaited<ReturnType<typeof buildApp>>;

  beforeAll(async () => {
    t = await buildTestApp({ env: { LOG_LEVEL: 'debug' } });
    s = await seedOrg(t.ctx);
    const stream = new Writable({ write(chunk, _enc, cb) { lines.push(chunk.toString()); cb(); } });
    app = await buildApp(t.ctx, { logger: { stream } });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await t.close();
  });

  it('redacts credentials, contact details and query values', async () => {
    const headers = { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ name: 'Logged', email: 'logged.person@example.com', phoneNumber: '+14155550166' });
    await app.inject({ method: 'POST', url: `${API}/leads`, headers, payload: body });
    await app.inject({ method: 'POST', url: `${API}/leads`, headers, payload: JSON.stringify({ name: 'Bad', email: 'bad-email-value', phoneNumber: '555' }) });
    await app.inject({ method: 'GET', url: `${API}/leads?q=logged.person%40example.com`, headers });
    await app.inject({ method: 'GET', url: `${API}/leads?q=%2B14155550166`, headers });
    await app.inject({ method: 'GET', url: `${API}/leads`, headers: { authorization: `Bearer ${s.key}x` } });
    const text = lines.join('');
    expect(lines.length).toBeGreaterThanOrEqual(5);
    expect(text).toContain('request completed');
    for (const secret of [s.key, s.key.slice(9), 'logged.person', 'logged.person%40example.com', '14155550166', 'bad-email-value']) {
      expect(text.includes(secret), secret).toBe(false);
    }
  });
});
