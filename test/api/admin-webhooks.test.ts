import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { call } from '../helpers/http.js';
import { eventually, verifyBoth } from '../helpers/receiver.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { startHarness, type Harness } from '../helpers/webhooks.js';
import { addConsoleUser, fieldError, get, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

let h: Harness;
let org: Seeded;
let admin: ConsoleSession;

beforeAll(async () => {
  h = await startHarness();
  org = await seedOrg(h.t.ctx, { timezone: 'UTC' });
  admin = await signIn(h.t.app, await addConsoleUser(h.t.ctx, org.orgId, { admin: true, name: 'Wendy Webhooks' }));
});
afterAll(() => h?.close());

const secretOf = (body: string) => /id="secret-value" class="code" type="text" readonly value="(whsec_[^"]+)"/.exec(body)?.[1];

async function addEndpoint(path: string, events: string | string[] = '*', description = '') {
  const res = await submit(h.t.app, admin, '/admin/config/webhooks', { url: h.receiver.url(path), events, description });
  expect(res.status, res.body).toBe(201);
  const id = /href="\/admin\/config\/webhooks\/([0-9a-f]{24})"/.exec(res.body)![1]!;
  return { id, secret: secretOf(res.body)!, page: res.body };
}

describe('API and Webhooks', () => {
  it('adds an endpoint showing its secret once; a test event reaches the receiver signed, and the log shows it', async () => {
    const { id, secret, page } = await addEndpoint('/console-1', ['lead.created', 'deal.stage_changed'], 'Sales sync');
    expect(secret).toMatch(/^whsec_/);
    expect(page).toContain('data-copy="secret-value"');
    expect(page).toContain(`<dd><code>${h.receiver.url('/console-1')}</code></dd>`);
    const list = await get(h.t.app, '/admin/config/webhooks', admin.cookie);
    expect(list.body).not.toContain(secret);
    expect(list.body).toContain('<li>lead.created</li><li>deal.stage_changed</li>');
    expect(list.body).toContain('Sales sync');
    expect(list.body).toContain('None yet');
    expect((await get(h.t.app, `/admin/config/webhooks/${id}`, admin.cookie)).body).not.toContain(secret);

    const sent = await submit(h.t.app, admin, `/admin/config/webhooks/${id}/test`);
    expect(sent.status).toBe(303);
    const [received] = await h.receiver.waitFor('/console-1', 1);
    const event = verifyBoth(received!, secret);
    expect(event).toMatchObject({ type: 'webhook.test', data: { object: 'webhook', id, actor: { type: 'USER', id: admin.userId, channel: 'UI' } } });
    const [stored] = await listEvents(h.t.ctx.database.db, org.orgId, { objectId: id });
    expect(stored!.data.actor).toEqual({ type: 'USER', id: admin.userId, channel: 'UI' });

    const log = await eventually(async () => {
      const res = await get(h.t.app, `/admin/config/webhooks/${id}`, admin.cookie);
      expect(res.body).toContain('badge--good">Succeeded');
      return res.body;
    });
    expect(log).toContain('<code>webhook.test</code>');
    expect(log).toMatch(/Succeeded<\/span><span class="subline">Attempt 1<\/span><\/td>\s*<td class="num">\d+ ms<\/td>\s*<td class="response"><code>200<\/code> <span class="excerpt">ok<\/span>/);
    expect((await get(h.t.app, '/admin/config/webhooks', admin.cookie)).body).toMatch(/badge--good">Succeeded<\/span> <code>webhook.test<\/code>/);

    const deliveryId = /action="\/admin\/config\/webhooks\/[0-9a-f]{24}\/deliveries\/([0-9a-f]{24})\/resend"/.exec(log)![1]!;
    const resent = await submit(h.t.app, admin, `/admin/config/webhooks/${id}/deliveries/${deliveryId}/resend`);
    expect(resent.location).toBe(`/admin/config/webhooks/${id}?notice=resent`);
    const [, again] = await h.receiver.waitFor('/console-1', 2);
    expect(again!.headers['webhook-id']).toBe(received!.headers['webhook-id']);
    expect(verifyBoth(again!, secret).id).toBe(event.id);
  });

  it('shows the API\'s refusals next to the fields', async () => {
    const none = await submit(h.t.app, admin, '/admin/config/webhooks', { url: 'not a url', description: 'kept' });
    expect(none.status).toBe(400);
    expect(fieldError(none.body, 'url')).toBe('Error: Endpoint URL must be an absolute URL');
    expect(fieldError(none.body, 'events')).toBe('Error: Events must have at least 1 item');
    expect(none.body).toContain('>kept</textarea>');
    const scheme = await submit(h.t.app, admin, '/admin/config/webhooks', { url: 'ftp://127.0.0.1/x', events: '*' });
    expect(fieldError(scheme.body, 'url')).toMatch(/^Error: Endpoint URL .*http/);
  });

  it('disables and enables, rotates the secret (shown once; both sign for a day) and deletes after a confirmation page', async () => {
    const { id, secret } = await addEndpoint('/console-2');
    const disabled = await submit(h.t.app, admin, `/admin/config/webhooks/${id}/disable`);
    expect(disabled.location).toBe(`/admin/config/webhooks/${id}?notice=disabled`);
    const page = await get(h.t.app, disabled.location!, admin.cookie);
    expect(page.body).toContain('badge--bad">Disabled</span><span class="subline">Disabled by a user</span>');
    expect(page.body).not.toContain('Send test event');
    const refused = await submit(h.t.app, admin, `/admin/config/webhooks/${id}/test`);
    expect(refused.status).toBe(409);
    expect(refused.body).toContain('The webhook is disabled; enable it before sending a test event');
    expect((await get(h.t.app, '/admin/config/webhooks', admin.cookie)).body).toContain('Disabled by a user');
    await submit(h.t.app, admin, `/admin/config/webhooks/${id}/enable`);
    expect((await get(h.t.app, `/admin/config/webhooks/${id}`, admin.cookie)).body).toContain('badge--good">Enabled');

    const rotated = await submit(h.t.app, admin, `/admin/config/webhooks/${id}/rotate`);
    expect(rotated.status).toBe(200);
    const fresh = secretOf(rotated.body)!;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    await submit(h.t.app, admin, `/admin/config/webhooks/${id}/test`);
    const [received] = await h.receiver.waitFor('/console-2', 1);
    expect(verifyBoth(received!, fresh).type).toBe('webhook.test');
    expect(verifyBoth(received!, secret).type).toBe('webhook.test');

    const confirm = await get(h.t.app, `/admin/config/webhooks/${id}/delete`, admin.cookie);
    expect(confirm.body).toContain('its delivery log is deleted with it');
    const deleted = await submit(h.t.app, admin, `/admin/config/webhooks/${id}/delete`);
    expect(deleted.location).toBe('/admin/config/webhooks?notice=deleted');
    expect((await call(h.t.app, 'GET', `/webhooks/${id}`, { auth: org.auth })).status).toBe(404);
    expect((await get(h.t.app, `/admin/config/webhooks/${id}`, admin.cookie)).status).toBe(404);
  });

  it('edits an endpoint: "All events" stands alone, a blank description clears it', async () => {
    const { id } = await addEndpoint('/console-3', 'lead.created', 'Old');
    const res = await submit(h.t.app, admin, `/admin/config/webhooks/${id}`, { url: h.receiver.url('/console-3b'), events: ['*', 'lead.updated'], description: '' });
    expect(res.status, res.body).toBe(303);
    const webhook = (await call(h.t.app, 'GET', `/webhooks/${id}`, { auth: org.auth })).body.data.webhook;
    expect(webhook).toMatchObject({ url: h.receiver.url('/console-3b'), events: ['*'], description: null });
  });
});
