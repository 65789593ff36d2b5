import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;
const clock = new ManualClock('2026-05-01T10:00:00.000Z');

beforeAll(async () => {
  t = await buildTestApp({ clock });
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
});
afterAll(() => t.close());

type Entry = { type: string; at: string; event?: { id: string; type: string }; note?: { id: string; body: string }; task?: { id: string; title: string } };
const label = (e: Entry) => (e.type === 'event' ? e.event!.type : e.type === 'note' ? `note:${e.note!.body}` : `task:${e.task!.title}`);

/** Every entry, following nextCursor with pages of `limit`. */
async function walk(path: string, auth: Record<string, string>, limit: number): Promise<Entry[]> {
  const out: Entry[] = [];
  let after: string | null = null;
  for (let i = 0; i < 50; i++) {
    const res = await call(t.app, 'GET', `${path}?limit=${limit}${after ? `&after=${after}` : ''}`, { auth });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(...res.body.data.timeline);
    after = res.body.data.pagination.nextCursor;
    if (after === null) return out;
  }
  throw new Error('no last page');
}

describe('GET /leads/{id}/timeline', () => {
  it('merges the lead\'s events, notes and tasks newest first, ties at one instant included, and pages through each once', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Ada' } })).body.data.lead.id;
    // Same instant as lead.created: the order between sources is still total (event, note, task by rank).
    await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'lead', id: lead }, body: 'n1' } });
    await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 't1', target: { object: 'lead', id: lead } } });
    clock.advance(1000);
    await call(t.app, 'PATCH', `/leads/${lead}`, { auth: a.auth, body: { company: 'Engines' } });
    await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'lead', id: lead }, body: 'n2' } });
    await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'lead', id: lead }, body: 'n3' } });
    const trashed = (await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'lead', id: lead }, body: 'gone' } })).body.data.note.id;
    await call(t.app, 'DELETE', `/notes/${trashed}`, { auth: a.auth });
    clock.advance(1000);
    await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 't2', target: { object: 'lead', id: lead } } });
    const other = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Other' } })).body.data.lead.id;
    await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'lead', id: other }, body: 'elsewhere' } });

    const expected = ['task:t2', 'note:n3', 'note:n2', 'lead.updated', 'task:t1', 'note:n1', 'lead.created'];
    const all = await walk(`/leads/${lead}/timeline`, a.auth, 100);
    expect(all.map(label)).toEqual(expected);
    for (const limit of [1, 2, 3]) expect((await walk(`/leads/${lead}/timeline`, a.auth, limit)).map(label)).toEqual(expected);
    expect(all[0]).toMatchObject({ type: 'task', at: '2026-05-01T10:00:02.000Z', task: { title: 't2', target: { object: 'lead', id: lead } } });
    expect(all.at(-1)).toMatchObject({ type: 'event', event: { type: 'lead.created', data: { object: 'lead', id: lead } } });
  });

  it('shows notes and tasks only to keys that may read them', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Scoped' } })).body.data.lead.id;
    await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'lead', id: lead }, body: 'private' } });
    await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'todo', target: { object: 'lead', id: lead } } });
    const leadsOnly = await addKey(t.ctx, a.orgId, ['leads:read']);
    expect((await walk(`/leads/${lead}/timeline`, leadsOnly.auth, 10)).map(label)).toEqual(['lead.created']);
    const withNotes = await addKey(t.ctx, a.orgId, ['leads:read', 'notes:read']);
    expect((await walk(`/leads/${lead}/timeline`, withNotes.auth, 10)).map(label)).toEqual(['note:private', 'lead.created']);
    const notesOnly = await addKey(t.ctx, a.orgId, ['notes:read', 'tasks:read']);
    expectError(await call(t.app, 'GET', `/leads/${lead}/timeline`, { auth: notesOnly.auth }), 403, 'INSUFFICIENT_SCOPE');
  });

  it('answers 404 for a trashed item or another organization\'s, 400 for a bad cursor or parameter', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Gone' } })).body.data.lead.id;
    expectError(await call(t.app, 'GET', `/leads/${lead}/timeline`, { auth: b.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'GET', `/accounts/${lead}/timeline`, { auth: a.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'GET', `/leads/${lead}/timeline?after=nope`, { auth: a.auth }), 400, 'VALIDATION_FAILED');
    expectError(await call(t.app, 'GET', `/leads/${lead}/timeline?page=2`, { auth: a.auth }), 400, 'VALIDATION_FAILED');
    await call(t.app, 'DELETE', `/leads/${lead}`, { auth: a.auth });
    expectError(await call(t.app, 'GET', `/leads/${lead}/timeline`, { auth: a.auth }), 404, 'NOT_FOUND');
  });
});

describe('account, deal and record timelines', () => {
  it('each lists its own events, notes and tasks', async () => {
    const account = (await call(t.app, 'POST', '/accounts', { auth: a.auth, body: { name: 'Acme' } })).body.data.account.id;
    const deal = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Deal' } })).body.data.deal.id;
    await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'visits', name: 'Visits', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
    const record = (await call(t.app, 'POST', '/objects/visits/records', { auth: a.auth, body: { title: 'Flat' } })).body.data.record.id;
    clock.advance(1000);
    await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'account', id: account }, body: 'acc' } });
    await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'close', target: { object: 'deal', id: deal } } });
    await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'record', id: record, objectSlug: 'visits' }, body: 'rec' } });
    expect((await walk(`/accounts/${account}/timeline`, a.auth, 10)).map(label)).toEqual(['note:acc', 'account.created']);
    expect((await walk(`/deals/${deal}/timeline`, a.auth, 10)).map(label)).toEqual(['task:close', 'deal.created']);
    expect((await walk(`/objects/visits/records/${record}/timeline`, a.auth, 10)).map(label)).toEqual(['note:rec', 'record.created']);
    expectError(await call(t.app, 'GET', `/objects/other/records/${record}/timeline`, { auth: a.auth }), 404, 'NOT_FOUND');
  });
});
