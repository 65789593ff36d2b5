import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppWithSharedSchemas, buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { API } from '../helpers/http.js';

/** Requests logged at debug level never contain the key, an e-mail or a phone number. */
describe('logs', () => {
  let t: TestApp;
  let s: Seeded;
  const lines: string[] = [];
  let app: Awaited<ReturnType<typeof buildAppWithSharedSchemas>>;

  beforeAll(async () => {
    t = await buildTestApp({ env: { LOG_LEVEL: 'debug' } });
    s = await seedOrg(t.ctx);
    const stream = new Writable({ write(chunk, _enc, cb) { lines.push(chunk.toString()); cb(); } });
    app = await buildAppWithSharedSchemas(t.ctx, { logger: { stream } });
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

  it('redacts path segments that are not ids or slugs, and no error message echoes a path value', async () => {
    const headers = { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' };
    const lead = JSON.parse((await app.inject({ method: 'POST', url: `${API}/leads`, headers, payload: JSON.stringify({ name: 'Path' }) })).body).data.lead;
    const values = ['path.person@example.com', 'path.person%40example.com', s.key, '%2B16505550123', '16505550123', 'tel16505550123', 'Path-Person'];
    const paths = values.flatMap((v) => [`/leads/${v}`, `/leads/${v}/restore`, `/objects/${v}/records`, `/objects/${v}/records/${lead.id}`, `/leads/${v}/no-such-route`]);
    const before = lines.length;
    const bodies: string[] = [];
    for (const path of paths) {
      for (const method of ['GET', 'PATCH'] as const) {
        const res = await app.inject({ method, url: API + path, headers, ...(method === 'PATCH' ? { payload: JSON.stringify({ name: 'x' }) } : {}) });
        expect(res.statusCode, `${method} ${path}: ${res.body}`).toBeGreaterThanOrEqual(400);
        bodies.push(res.body);
      }
    }
    const logged = lines.slice(before).join('');
    expect(logged).toContain(`"url":"${API}/leads/[redacted]"`);
    for (const secret of ['path.person', 'example.com', s.key, s.key.slice(9, 20), '16505550123', '%2B', 'Path-Person']) {
      expect(logged.includes(secret), `log: ${secret}`).toBe(false);
      expect(bodies.filter((b) => b.includes(secret)), `bodies: ${secret}`).toEqual([]);
    }
    expect(bodies.filter((b) => b.includes('"message":"Lead not found"')).length).toBeGreaterThan(0);
    // What is known safe stays readable: ids, static segments and slugs.
    await app.inject({ method: 'GET', url: `${API}/leads/${lead.id}?q=x`, headers });
    await app.inject({ method: 'GET', url: `${API}/objects/deal_notes2/records`, headers });
    await app.inject({ method: 'GET', url: `${API}/openapi.json` });
    const safe = lines.slice(before).join('');
    for (const path of [`${API}/leads/${lead.id}?q=[redacted]`, `${API}/objects/deal_notes2/records`, `${API}/openapi.json`]) expect(safe).toContain(`"url":"${path}"`);
  });
});
