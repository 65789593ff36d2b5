import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import type { TestApp } from '../helpers/test-app.js';
import { addKey, addUser, seedOrg, type Seeded } from '../helpers/seed.js';
import { callError, callOk, connect, httpTransport, openMcp, type McpSetup } from '../helpers/mcp.js';
import { call } from '../helpers/http.js';

/** add_note, update_note, create_task, update_task, complete_task, list_notes, search_tasks, list_users and get_timeline over Streamable HTTP. */
describe('MCP notes, tasks and timeline tools', () => {
  let mcp: McpSetup | undefined;
  let t: TestApp;
  let origin: string;
  let s: Seeded;
  let client: Client;

  beforeAll(async () => {
    mcp = await openMcp();
    ({ t, origin, s, client } = mcp);
  });
  afterAll(() => mcp?.close());

  it('an agent notes a call, plans a follow-up, completes it and reads the lead\'s timeline', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Ada' } })).body.data.lead.id;
    const { note } = await callOk(client, 'add_note', { target: { object: 'lead', id: lead }, body: 'Called, wants a demo' });
    expect(note).toMatchObject({ target: { object: 'lead', id: lead }, body: 'Called, wants a demo' });
    const { task } = await callOk(client, 'create_task', { title: 'Book the demo', dueDate: '2026-12-01', target: { object: 'lead', id: lead } });
    expect(task).toMatchObject({ status: 'open', dueDate: '2026-12-01T00:00:00.000Z' });
    expect((await callOk(client, 'search_tasks', { status: 'open' })).tasks.map((x: { id: string }) => x.id)).toEqual([task.id]);
    expect((await callOk(client, 'complete_task', { id: task.id })).task).toMatchObject({ status: 'done', completedAt: expect.any(String) });
    const events = await listEvents(t.ctx.database.db, s.orgId, { objectId: task.id });
    expect(events.map((e) => [e.type, e.data.actor.channel])).toEqual([['task.created', 'MCP'], ['task.completed', 'MCP']]);
    const timeline = await callOk(client, 'get_timeline', { object: 'lead', id: lead, limit: 2 });
    expect(timeline.timeline.map((e: { type: string }) => e.type)).toHaveLength(2);
    expect(timeline.pagination.nextCursor).toEqual(expect.any(String));
    const rest = await callOk(client, 'get_timeline', { object: 'lead', id: lead, after: timeline.pagination.nextCursor });
    expect([...timeline.timeline, ...rest.timeline].map((e: { type: string }) => e.type).sort()).toEqual(['event', 'note', 'task']);
    const filtered = await callOk(client, 'get_timeline', { object: 'lead', id: lead, types: 'note,task', createdAfter: '2020-01-01T00:00:00Z', createdBefore: '2100-01-01T00:00:00+02:00', limit: 1 });
    expect(filtered.timeline.map((e: { type: string }) => e.type)).toHaveLength(1);
    const older = await callOk(client, 'get_timeline', { object: 'lead', id: lead, types: 'note,task', after: filtered.pagination.nextCursor });
    expect([...filtered.timeline, ...older.timeline].map((e: { type: string }) => e.type).sort()).toEqual(['note', 'task']);
    const { errors } = await callError(client, 'get_timeline', { object: 'lead', id: lead, types: 'note,call' }, 'VALIDATION_FAILED');
    expect(errors).toEqual([{ field: 'types', code: 'invalid_value', message: 'Unknown entry type call; one of event, note, task' }]);
  });

  it('update_note fixes a note\'s text (note.updated on channel MCP); the same text again changes nothing', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Typo' } })).body.data.lead.id;
    const created = (await call(t.app, 'POST', '/notes', { auth: s.auth, body: { target: { object: 'lead', id: lead }, body: 'Wnats a demo' } })).body.data.note;
    const { note } = await callOk(client, 'update_note', { id: created.id, changes: { body: 'Wants a demo' } });
    expect(note).toMatchObject({ id: created.id, target: { object: 'lead', id: lead }, body: 'Wants a demo' });
    expect((await call(t.app, 'GET', `/notes/${created.id}`, { auth: s.auth })).body.data.note.body).toBe('Wants a demo');
    expect((await callOk(client, 'update_note', { id: created.id, changes: { body: 'Wants a demo' } })).note.updatedAt).toBe(note.updatedAt);
    const events = await listEvents(t.ctx.database.db, s.orgId, { objectId: created.id });
    expect(events.map((e) => [e.type, e.data.actor.channel])).toEqual([['note.created', 'API'], ['note.updated', 'MCP']]);
  });

  it('update_task retitles, reschedules, reassigns and reopens a task, with the REST events', async () => {
    const assignee = await addUser(t.ctx, s.orgId, 'Grace');
    const created = (await call(t.app, 'POST', '/tasks', { auth: s.auth, body: { title: 'Call bak', dueDate: '2027-01-10' } })).body.data.task;
    const { task } = await callOk(client, 'update_task', { id: created.id, changes: { title: 'Call back', dueDate: '2027-01-12', assigneeId: assignee } });
    expect(task).toMatchObject({ id: created.id, title: 'Call back', dueDate: '2027-01-12T00:00:00.000Z', assigneeId: assignee, status: 'open' });
    expect((await callOk(client, 'update_task', { id: created.id, changes: { status: 'done' } })).task).toMatchObject({ status: 'done', completedAt: expect.any(String) });
    expect((await callOk(client, 'update_task', { id: created.id, changes: { status: 'open', dueDate: null } })).task).toMatchObject({ status: 'open', completedAt: null, dueDate: null });
    const events = await listEvents(t.ctx.database.db, s.orgId, { objectId: created.id });
    expect(events.map((e) => [e.type, e.data.actor.channel])).toEqual([['task.created', 'API'], ['task.updated', 'MCP'], ['task.completed', 'MCP'], ['task.updated', 'MCP']]);
    expect(Object.keys(events[1]!.data.changes.after).sort()).toEqual(['assigneeId', 'dueDate', 'title']);
  });

  it('update_note and update_task refuse bad changes with the REST rules, and another organization\'s ids as not found', async () => {
    const task = (await call(t.app, 'POST', '/tasks', { auth: s.auth, body: { title: 'Checked' } })).body.data.task.id;
    const empty = await callError(client, 'update_task', { id: task, changes: {} }, 'VALIDATION_FAILED');
    expect(empty.errors).toEqual([{ field: 'changes', code: 'empty', message: 'must contain at least one field' }]);
    const blank = await callError(client, 'update_task', { id: task, changes: { title: ' ', status: 'later' } }, 'VALIDATION_FAILED');
    expect(blank.errors.map((e) => e.field).sort()).toEqual(['changes.status', 'changes.title']);
    const refs = await callError(client, 'update_task', { id: task, changes: { dueDate: '2027-02-30', assigneeId: 'abcdefabcdefabcdefabcdef' } }, 'VALIDATION_FAILED');
    expect(refs.errors.map((e) => [e.field, e.code]).sort()).toEqual([['changes.assigneeId', 'not_found'], ['changes.dueDate', 'invalid_date']]);
    const lead = (await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Noted' } })).body.data.lead.id;
    const note = (await call(t.app, 'POST', '/notes', { auth: s.auth, body: { target: { object: 'lead', id: lead }, body: 'kept' } })).body.data.note.id;
    const moved = await callError(client, 'update_note', { id: note, changes: { body: 'x', target: { object: 'lead', id: lead } } }, 'VALIDATION_FAILED');
    expect(moved.errors).toEqual([expect.objectContaining({ field: 'changes.target', code: 'unknown_field' })]);
    await callError(client, 'update_note', { id: note, changes: { body: '   ' } }, 'VALIDATION_FAILED');
    expect((await callOk(client, 'list_notes', { targetId: lead })).notes.map((n: { body: string }) => n.body)).toEqual(['kept']);

    const other = await seedOrg(t.ctx);
    const theirs = (await call(t.app, 'POST', '/tasks', { auth: other.auth, body: { title: 'Theirs' } })).body.data.task.id;
    const { text } = await callError(client, 'update_task', { id: theirs, changes: { title: 'Mine now' } }, 'NOT_FOUND');
    expect(text).toBe('NOT_FOUND: Task not found');
    await callError(client, 'update_note', { id: 'abcdefabcdefabcdefabcdef', changes: { body: 'x' } }, 'NOT_FOUND');
    expect((await call(t.app, 'GET', `/tasks/${theirs}`, { auth: other.auth })).body.data.task.title).toBe('Theirs');
  });

  it('update_note needs notes:write and update_task tasks:write, as their PATCH routes; both are writes, not destructive', async () => {
    const readOnly = await addKey(t.ctx, s.orgId, ['notes:read', 'tasks:read']);
    const reader = await connect(httpTransport(origin, readOnly.key));
    try {
      const task = (await call(t.app, 'POST', '/tasks', { auth: s.auth, body: { title: 'Untouched' } })).body.data.task.id;
      expect((await callError(reader, 'update_task', { id: task, changes: { title: 'Touched' } }, 'INSUFFICIENT_SCOPE')).text).toContain('tasks:write');
      expect((await callError(reader, 'update_note', { id: task, changes: { body: 'x' } }, 'INSUFFICIENT_SCOPE')).text).toContain('notes:write');
      expect((await call(t.app, 'GET', `/tasks/${task}`, { auth: s.auth })).body.data.task.title).toBe('Untouched');
    } finally {
      await reader.close();
    }
    const { tools } = await client.listTools();
    for (const name of ['update_note', 'update_task']) {
      expect(tools.find((tool) => tool.name === name)!.annotations, name).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: false });
    }
  });

  it('get_timeline asks for the slug of a record, and refuses one for anything else', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Slugless' } })).body.data.lead.id;
    const { errors } = await callError(client, 'get_timeline', { object: 'record', id: lead }, 'VALIDATION_FAILED');
    expect(errors).toEqual([expect.objectContaining({ field: 'objectSlug', code: 'required' })]);
    const refused = await callError(client, 'get_timeline', { object: 'lead', id: lead, objectSlug: 'projects' }, 'VALIDATION_FAILED');
    expect(refused.errors).toEqual([expect.objectContaining({ field: 'objectSlug', code: 'not_allowed' })]);
  });

  it('update_lead lists a bad custom value next to a bad standard one, both named under changes, as the fields the service checks', async () => {
    await call(t.app, 'PATCH', '/objects/leads', { auth: s.auth, body: { fields: [{ key: 'score', label: 'Score', type: 'number' }] } });
    const lead = (await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Scored' } })).body.data.lead.id;
    const both = await callError(client, 'update_lead', { id: lead, changes: { email: 'not-an-email', score: 'high' } }, 'VALIDATION_FAILED');
    expect(both.errors.map((e) => e.field).sort()).toEqual(['changes.email', 'changes.score']);
    const alone = await callError(client, 'update_lead', { id: lead, changes: { score: 'high' } }, 'VALIDATION_FAILED');
    expect(alone.errors.map((e) => e.field)).toEqual(['changes.score']);
    const owner = await callError(client, 'update_lead', { id: lead, changes: { ownerId: 'abcdefabcdefabcdefabcdef' } }, 'VALIDATION_FAILED');
    expect(owner.errors).toEqual([{ field: 'changes.ownerId', code: 'not_found', message: 'is not an active user of this organization' }]);
    expect(owner.text.split('\n')[0]).toBe('VALIDATION_FAILED: changes.ownerId: is not an active user of this organization');
    expect((await callOk(client, 'update_lead', { id: lead, changes: { score: 7 } })).lead.score).toBe(7);
  });

  it('tools/list types the organization\'s custom lead fields in the lead tools, as its OpenAPI document does', async () => {
    const defined = await call(t.app, 'PATCH', '/objects/leads', { auth: s.auth, body: { fields: [{ key: 'score', label: 'Score', type: 'number' }, { key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver'] }] } });
    expect(defined.status, JSON.stringify(defined.body)).toBe(200);
    const { tools } = await client.listTools();
    const input = (name: string) => tools.find((tool) => tool.name === name)!.inputSchema as { properties: Record<string, any>; required?: string[] };
    expect(input('create_lead').properties.tier).toEqual({ anyOf: [expect.objectContaining({ type: 'string', enum: ['gold', 'silver'] }), { type: 'null' }] });
    expect(input('update_lead').properties.changes.properties.score).toEqual({ anyOf: [expect.objectContaining({ type: 'number' }), { type: 'null' }] });
    expect(Object.keys(input('search_leads').properties)).toEqual(expect.arrayContaining(['filter[score]', 'filter[score][gte]', 'filter[tier]']));
    // Accounts have none: their tools are as published for everyone.
    expect(Object.keys(input('create_account').properties)).not.toContain('score');
  });

  it('list_notes, search_tasks and list_users take the filters, sort and cursors of their lists', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Cy' } })).body.data.lead.id;
    const notes = [];
    for (const body of ['first', 'second', 'third']) notes.push((await callOk(client, 'add_note', { target: { object: 'lead', id: lead }, body })).note.id);
    const page = await callOk(client, 'list_notes', { targetId: lead, sort: 'createdAt', limit: 2 });
    const rest = await callOk(client, 'list_notes', { targetId: lead, sort: 'createdAt', limit: 2, after: page.pagination.nextCursor });
    expect([...page.notes, ...rest.notes].map((n: { id: string }) => n.id)).toEqual(notes);
    for (const dueDate of ['2027-03-01', '2027-01-15']) await callOk(client, 'create_task', { title: dueDate, dueDate, target: { object: 'lead', id: lead } });
    const due = await callOk(client, 'search_tasks', { targetObject: 'lead', targetId: lead, sort: 'dueDate' });
    expect(due.tasks.map((x: { title: string }) => x.title)).toEqual(['2027-01-15', '2027-03-01']);
    expect((await callOk(client, 'list_users', { role: 'admin', sort: 'name' })).users.every((u: { role: string }) => u.role === 'admin')).toBe(true);
    const { errors } = await callError(client, 'search_tasks', { sort: 'priority' }, 'VALIDATION_FAILED');
    expect(errors[0]!.field).toBe('sort');
  });

  it('refuses bad input with the REST messages, and a timeline without the item\'s read scope', async () => {
    const { errors } = await callError(client, 'add_note', { target: { object: 'record', id: 'abcdefabcdefabcdefabcdef' }, body: 'x' }, 'VALIDATION_FAILED');
    expect(errors).toEqual([{ field: 'target.objectSlug', code: 'required', message: 'is required for a record' }]);
    await callError(client, 'complete_task', { id: 'abcdefabcdefabcdefabcdef' }, 'NOT_FOUND');
    for (const tool of ['get_note', 'get_task', 'restore_note', 'restore_task']) await callError(client, tool, { id: 'abcdefabcdefabcdefabcdef' }, 'NOT_FOUND');
    const dealsOnly = await addKey(t.ctx, s.orgId, ['deals:read']);
    const limited = await connect(httpTransport(origin, dealsOnly.key));
    try {
      const lead = (await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Bob' } })).body.data.lead.id;
      const { text } = await callError(limited, 'get_timeline', { object: 'lead', id: lead }, 'INSUFFICIENT_SCOPE');
      expect(text).toContain('leads:read');
    } finally {
      await limited.close();
    }
  });
});
