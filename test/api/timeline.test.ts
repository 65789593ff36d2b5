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

/** Every entry, following nextCursor with pages of `limit` (and the filters in `query`, e.g. `&types=note`). */
async function walk(path: string, auth: Record<string, string>, limit: number, query = ''): Promise<Entry[]> {
  const out: Entry[] = [];
  let after: string | null = null;
  for (let i = 0; i < 50; i++) {
    const res = await call(t.app, 'GET', `${path}?limit=${limit}${query}${after ? `&after=${after}` : ''}`, { auth });
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

describe('timeline filters: types, createdAfter, createdBefore', () => {
  let lead: string;
  const path = () => `/leads/${lead}/timeline`;
  const at = (s: number) => new Date(Date.parse('2026-06-01T10:00:00.000Z') + s * 1000).toISOString();

  beforeAll(async () => {
    clock.set(new Date(at(0)));
    lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Filtered' } })).body.data.lead.id;
    await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'lead', id: lead }, body: 'n0' } });
    clock.set(new Date(at(1)));
    await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 't1', target: { object: 'lead', id: lead } } });
    await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'lead', id: lead }, body: 'n1' } });
    clock.set(new Date(at(2)));
    await call(t.app, 'PATCH', `/leads/${lead}`, { auth: a.auth, body: { company: 'Filters Inc' } });
    await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'lead', id: lead }, body: 'n2' } });
    clock.set(new Date(at(3)));
    await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 't3', target: { object: 'lead', id: lead } } });
  });

  const everything = ['task:t3', 'note:n2', 'lead.updated', 'task:t1', 'note:n1', 'note:n0', 'lead.created'];

  it('types keeps the kinds named, in any order and spacing, and the walk stays exact at every page size', async () => {
    expect((await walk(path(), a.auth, 100)).map(label)).toEqual(everything);
    const cases: [string, string[]][] = [
      ['note', ['note:n2', 'note:n1', 'note:n0']],
      ['task,note', ['task:t3', 'note:n2', 'task:t1', 'note:n1', 'note:n0']],
      ['event', ['lead.updated', 'lead.created']],
      [encodeURIComponent(' task , event,'), ['task:t3', 'lead.updated', 'task:t1', 'lead.created']],
      ['event,note,task,note', everything],
    ];
    for (const [types, expected] of cases) {
      for (const limit of [1, 2, 3, 100]) expect((await walk(path(), a.auth, limit, `&types=${types}`)).map(label), `${types} by ${limit}`).toEqual(expected);
    }
  });

  it('createdAfter and createdBefore bound `at` strictly, with Z or an offset, alone or with types', async () => {
    const range = async (query: string, limit = 2) => (await walk(path(), a.auth, limit, query)).map(label);
    expect(await range(`&createdAfter=${at(1)}`)).toEqual(['task:t3', 'note:n2', 'lead.updated']);
    expect(await range(`&createdBefore=${at(1)}`)).toEqual(['note:n0', 'lead.created']);
    expect(await range(`&createdAfter=${at(0)}&createdBefore=${at(3)}`, 1)).toEqual(['note:n2', 'lead.updated', 'task:t1', 'note:n1']);
    // One millisecond inside each bound keeps the entries on it.
    expect(await range(`&createdAfter=${at(0.999)}&createdBefore=${at(1.001)}`)).toEqual(['task:t1', 'note:n1']);
    expect(await range(`&createdAfter=${encodeURIComponent('2026-06-01T12:00:01+02:00')}&types=note,event`, 1)).toEqual(['note:n2', 'lead.updated']);
    expect(await range(`&createdAfter=${at(3)}`)).toEqual([]);
    expect(await range(`&createdAfter=${at(2)}&createdBefore=${at(1)}`)).toEqual([]);
  });

  it('a cursor holds a position: with other filters the walk goes on from it under them', async () => {
    const first = await call(t.app, 'GET', `${path()}?limit=3`, { auth: a.auth });
    expect(first.body.data.timeline.map(label)).toEqual(everything.slice(0, 3));
    const after = first.body.data.pagination.nextCursor as string;
    const rest = await call(t.app, 'GET', `${path()}?limit=10&types=note&after=${after}`, { auth: a.auth });
    expect(rest.status).toBe(200);
    expect(rest.body.data.timeline.map(label)).toEqual(['note:n1', 'note:n0']);
    expect(rest.body.data.pagination.nextCursor).toBeNull();
  });

  it('refuses an unknown or empty type and a bad instant with 400 naming them, and a kind the key may not read with 403', async () => {
    const bad = async (query: string) => {
      const res = await call(t.app, 'GET', `${path()}?${query}`, { auth: a.auth });
      expectError(res, 400, 'VALIDATION_FAILED');
      return res.body.errors;
    };
    expect(await bad('types=note,comment,call')).toEqual([{ field: 'types', code: 'invalid_value', message: 'Unknown entry type comment, call; one of event, note, task' }]);
    expect((await bad('types=,'))[0]).toMatchObject({ field: 'types', code: 'invalid_value' });
    expect(await bad('createdAfter=yesterday')).toEqual([{ field: 'createdAfter', code: 'invalid_format', message: 'must be an ISO 8601 timestamp, e.g. 2026-11-21T10:00:00.000Z' }]);
    expect((await bad('createdBefore=2026-06-01T10:00:00')).map((e: { field: string }) => e.field)).toEqual(['createdBefore']);
    expect((await bad('types=nope&after=nope')).map((e: { field: string }) => e.field).sort()).toEqual(['after', 'types']);
    expect((await bad('updatedAfter=2026-06-01T10:00:00Z'))[0]).toMatchObject({ field: 'updatedAfter', code: 'unknown_field' });
    const leadsOnly = await addKey(t.ctx, a.orgId, ['leads:read']);
    expect((await walk(path(), leadsOnly.auth, 10, '&types=event')).map(label)).toEqual(['lead.updated', 'lead.created']);
    const res = await call(t.app, 'GET', `${path()}?types=event,note`, { auth: leadsOnly.auth });
    expectError(res, 403, 'INSUFFICIENT_SCOPE');
    expect(res.body.message).toContain('notes:read');
  });

  it('filters account, deal and record timelines the same way', async () => {
    const account = (await call(t.app, 'POST', '/accounts', { auth: a.auth, body: { name: 'Filtered Co' } })).body.data.account.id;
    await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'account', id: account }, body: 'acc' } });
    expect((await walk(`/accounts/${account}/timeline`, a.auth, 10, '&types=note')).map(label)).toEqual(['note:acc']);
    const deal = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Filtered deal' } })).body.data.deal.id;
    expect((await walk(`/deals/${deal}/timeline`, a.auth, 10, `&types=event&createdBefore=${at(10)}`)).map(label)).toEqual(['deal.created']);
    await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'calls', name: 'Calls', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
    const record = (await call(t.app, 'POST', '/objects/calls/records', { auth: a.auth, body: { title: 'c' } })).body.data.record.id;
    await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'call back', target: { object: 'record', id: record, objectSlug: 'calls' } } });
    expect((await walk(`/objects/calls/records/${record}/timeline`, a.auth, 10, '&types=task')).map(label)).toEqual(['task:call back']);
    expectError(await call(t.app, 'GET', `/objects/calls/records/${record}/timeline?types=email`, { auth: a.auth }), 400, 'VALIDATION_FAILED');
  });
});
