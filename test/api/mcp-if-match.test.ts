import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/test-app.js';
import { addKey, type Seeded } from '../helpers/seed.js';
import { callError, callOk, connect, httpTransport, listen, openMcp, type McpSetup } from '../helpers/mcp.js';
import { call } from '../helpers/http.js';

/** The write tools take `ifMatch` as REST writes take If-Match: two agents editing one item don't overwrite each other. */
describe('MCP ifMatch', () => {
  let mcp: McpSetup | undefined;
  let t: TestApp;
  let s: Seeded;
  let client: Client;

  beforeAll(async () => {
    mcp = await openMcp();
    ({ t, s, client } = mcp);
    await call(t.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'crates', name: 'Crates', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
  });
  afterAll(() => mcp?.close());

  /** A refused call's whole structured content. */
  const refused = async (c: Client, name: string, args: Record<string, unknown>) => {
    await callError(c, name, args, 'PRECONDITION_FAILED');
    return (await c.callTool({ name, arguments: args })).structuredContent as Record<string, any>;
  };

  it.each([
    { get: 'get_lead', update: 'update_lead', create: 'create_lead', key: 'lead', path: '/leads', args: {}, body: { name: 'Ada' }, first: { company: 'First' }, second: { company: 'Second' } },
    { get: 'get_account', update: 'update_account', create: 'create_account', key: 'account', path: '/accounts', args: {}, body: { name: 'Acme' }, first: { domain: 'first.example' }, second: { domain: 'second.example' } },
    { get: 'get_deal', update: 'update_deal', create: 'create_deal', key: 'deal', path: '/deals', args: {}, body: { name: 'Big deal' }, first: { name: 'First' }, second: { name: 'Second' } },
    { get: 'get_record', update: 'update_record', create: 'create_record', key: 'record', path: '/objects/crates/records', args: { object: 'crates' }, body: { values: { title: 'Crate' } }, first: { title: 'First' }, second: { title: 'Second' } },
  ])('$update: the etag $get answers applies once; a stale one is PRECONDITION_FAILED with the current item; * applies', async ({ get, update, create, key, path, args, body, first, second }) => {
    const id = (await callOk(client, create, { ...args, ...body }))[key].id;
    const read = await callOk(client, get, { ...args, id });
    expect(read.etag).toBe((await call(t.app, 'GET', `${path}/${id}`, { auth: s.auth })).headers.etag);
    const written = await callOk(client, update, { ...args, id, changes: first, ifMatch: read.etag });
    expect(written[key]).toMatchObject(first);
    expect(written.etag).toBe((await call(t.app, 'GET', `${path}/${id}`, { auth: s.auth })).headers.etag);
    const stale = await refused(client, update, { ...args, id, changes: second, ifMatch: read.etag });
    expect(stale[key]).toEqual((await callOk(client, get, { ...args, id }))[key]);
    expect(stale.etag).toBe(written.etag);
    expect((await callOk(client, get, { ...args, id }))[key]).toMatchObject(first);
    expect((await callOk(client, update, { ...args, id, changes: second, ifMatch: '*' }))[key]).toMatchObject(second);
  });

  it('the refusal says the version changed and carries the current item and its etag in its text', async () => {
    const id = (await callOk(client, 'create_lead', { name: 'Bea' })).lead.id;
    const { text } = await callError(client, 'update_lead', { id, changes: { company: 'X' }, ifMatch: '"stale"' }, 'PRECONDITION_FAILED');
    expect(text).toMatch(/has changed since the version named by ifMatch/);
    const current = await callOk(client, 'get_lead', { id });
    expect(JSON.parse(text.split('\n')[1]!)).toEqual({ lead: current.lead, etag: current.etag });
  });

  it('move_deal_stage, update_note, update_task and complete_task take ifMatch too, their answers carrying the new etag', async () => {
    const deal = await callOk(client, 'get_deal', { id: (await callOk(client, 'create_deal', { name: 'Staged' })).deal.id });
    const moved = await callOk(client, 'move_deal_stage', { id: deal.deal.id, stage: 'proposal', ifMatch: deal.etag });
    expect((await refused(client, 'move_deal_stage', { id: deal.deal.id, stage: 'won', ifMatch: deal.etag })).deal.stage).toBe('proposal');
    await callOk(client, 'move_deal_stage', { id: deal.deal.id, stage: 'won', ifMatch: moved.etag });
    const lead = (await callOk(client, 'create_lead', { name: 'Noted' })).lead.id;
    const note = await callOk(client, 'update_note', { id: (await callOk(client, 'add_note', { target: { object: 'lead', id: lead }, body: 'a' })).note.id, changes: { body: 'b' } });
    expect((await refused(client, 'update_note', { id: note.note.id, changes: { body: 'c' }, ifMatch: '"old"' })).note.body).toBe('b');
    expect((await callOk(client, 'update_note', { id: note.note.id, changes: { body: 'c' }, ifMatch: note.etag })).note.body).toBe('c');
    const task = await callOk(client, 'update_task', { id: (await callOk(client, 'create_task', { title: 'Call' })).task.id, changes: { title: 'Call back' } });
    expect((await refused(client, 'update_task', { id: task.task.id, changes: { title: 'x' }, ifMatch: '"old"' })).task.title).toBe('Call back');
    expect((await refused(client, 'complete_task', { id: task.task.id, ifMatch: '"old"' })).task.status).toBe('open');
    expect((await callOk(client, 'complete_task', { id: task.task.id, ifMatch: task.etag })).task.status).toBe('done');
  });

  it('a delete with a stale ifMatch is refused and the item stays; with the current etag it goes', async () => {
    const read = await callOk(client, 'get_lead', { id: (await callOk(client, 'create_lead', { name: 'Keep me' })).lead.id });
    const updated = await callOk(client, 'update_lead', { id: read.lead.id, changes: { company: 'Changed' } });
    expect((await refused(client, 'delete_lead', { id: read.lead.id, ifMatch: read.etag })).lead.company).toBe('Changed');
    expect((await callOk(client, 'get_lead', { id: read.lead.id })).lead.deletedAt).toBeNull();
    expect((await callOk(client, 'delete_lead', { id: read.lead.id, ifMatch: updated.etag })).lead.deletedAt).not.toBeNull();
  });

  it.each([
    { create: 'create_lead', remove: 'delete_lead', restore: 'restore_lead', key: 'lead', path: '/leads', args: {}, body: { name: 'Back again' } },
    { create: 'create_record', remove: 'delete_record', restore: 'restore_record', key: 'record', path: '/objects/crates/records', args: { object: 'crates' }, body: { values: { title: 'Back again' } } },
    { create: 'add_note', remove: 'delete_note', restore: 'restore_note', key: 'note', path: '/notes', args: {}, body: { target: { object: 'deal', id: '' }, body: 'Back again' } },
    { create: 'create_task', remove: 'delete_task', restore: 'restore_task', key: 'task', path: '/tasks', args: {}, body: { title: 'Back again' } },
  ])('$restore takes the etag $remove answered; a stale one is refused with the trashed item and it stays in the trash', async ({ create, remove, restore, key, path, args, body }) => {
    const deal = (await callOk(client, 'create_deal', { name: 'Anchor' })).deal.id;
    const input = key === 'note' ? { ...body, target: { object: 'deal', id: deal } } : body;
    const id = (await callOk(client, create, { ...args, ...input }))[key].id;
    const trashed = await callOk(client, remove, { ...args, id });
    const stale = await refused(client, restore, { ...args, id, ifMatch: '"old"' });
    expect(stale[key]).toEqual(trashed[key]);
    expect(stale.etag).toBe(trashed.etag);
    expect((await call(t.app, 'GET', `${path}/${id}`, { auth: s.auth })).status).toBe(404);
    const restored = await callOk(client, restore, { ...args, id, ifMatch: trashed.etag });
    expect(restored[key].deletedAt).toBeNull();
    expect(restored.etag).toBe((await call(t.app, 'GET', `${path}/${id}`, { auth: s.auth })).headers.etag);
  });

  it('get_note and get_task answer the etag the REST GET sends', async () => {
    const note = (await callOk(client, 'add_note', { target: { object: 'deal', id: (await callOk(client, 'create_deal', { name: 'Noted deal' })).deal.id }, body: 'Read me' })).note;
    expect(await callOk(client, 'get_note', { id: note.id })).toEqual({ note, etag: (await call(t.app, 'GET', `/notes/${note.id}`, { auth: s.auth })).headers.etag });
    const task = (await callOk(client, 'create_task', { title: 'Read me', dueDate: '2027-02-01' })).task;
    expect(await callOk(client, 'get_task', { id: task.id })).toEqual({ task, etag: (await call(t.app, 'GET', `/tasks/${task.id}`, { auth: s.auth })).headers.etag });
  });

  it('an ifMatch that is not a non-empty string is VALIDATION_FAILED', async () => {
    const id = (await callOk(client, 'create_lead', { name: 'Cleo' })).lead.id;
    const { errors } = await callError(client, 'update_lead', { id, changes: { company: 'X' }, ifMatch: '' }, 'VALIDATION_FAILED');
    expect(errors.map((e) => e.field)).toEqual(['ifMatch']);
    await callError(client, 'delete_lead', { id, ifMatch: 3 }, 'VALIDATION_FAILED');
  });

  it('search results stay as they were: no etag', async () => {
    expect(Object.keys(await callOk(client, 'search_leads', {})).sort()).toEqual(['leads', 'pagination']);
  });

  it('a key that may write but not read gets the current item of a refusal in its minimal view, with its etag', async () => {
    const writer = await connect(httpTransport(await listen(t), (await addKey(t.ctx, s.orgId, ['leads:write'])).key));
    try {
      const lead = (await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Secret', email: 'secret@example.com' } })).body.data.lead;
      const stale = await refused(writer, 'update_lead', { id: lead.id, changes: { company: 'X' }, ifMatch: '"old"' });
      expect(stale.lead).toEqual({ id: lead.id, updatedAt: lead.updatedAt, deletedAt: null });
      expect(stale.etag).toBe((await call(t.app, 'GET', `/leads/${lead.id}`, { auth: s.auth })).headers.etag);
      const { text } = await callError(writer, 'update_lead', { id: lead.id, changes: { company: 'X' }, ifMatch: '"old"' }, 'PRECONDITION_FAILED');
      expect(text).not.toContain('secret@example.com');
      expect((await callOk(writer, 'update_lead', { id: lead.id, changes: { company: 'Y' }, ifMatch: stale.etag })).lead).toEqual({ id: lead.id, updatedAt: expect.any(String), deletedAt: null });
    } finally {
      await writer.close();
    }
  });
});
