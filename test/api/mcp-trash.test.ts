import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { callError, callOk, openMcp, type McpSetup } from '../helpers/mcp.js';
import { call } from '../helpers/http.js';

/** The delete and restore tools: one each per resource (notes and tasks included), delete marked destructive; trashed items vanish from the other tools. */
describe('MCP delete tools', () => {
  let mcp: McpSetup | undefined;
  let t: TestApp;
  let s: Seeded;
  let client: Client;

  beforeAll(async () => {
    mcp = await openMcp();
    ({ t, s, client } = mcp);
    await call(t.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'parcels', name: 'Parcels', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
  });
  afterAll(() => mcp?.close());

  it('lists one delete tool per resource, annotated destructive (and only those: restoring is not)', async () => {
    const { tools } = await client.listTools();
    const destructive = tools.filter((tool) => tool.annotations?.destructiveHint === true).map((tool) => tool.name).sort();
    expect(destructive).toEqual(['delete_account', 'delete_deal', 'delete_lead', 'delete_note', 'delete_record', 'delete_task']);
    for (const name of destructive) expect(tools.find((tool) => tool.name === name)!.annotations?.readOnlyHint).toBe(false);
    const restores = tools.filter((tool) => tool.name.startsWith('restore_'));
    expect(restores.map((tool) => tool.name).sort()).toEqual(destructive.map((name) => name.replace('delete_', 'restore_')));
    for (const tool of restores) expect(tool.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
  });

  it.each([
    { tool: 'delete_lead', restore: 'restore_lead', create: 'create_lead', search: 'search_leads', get: 'get_lead', key: 'lead', list: 'leads', args: {}, body: { name: 'Mcp Marmot' } },
    { tool: 'delete_account', restore: 'restore_account', create: 'create_account', search: 'search_accounts', get: 'get_account', key: 'account', list: 'accounts', args: {}, body: { name: 'Mcp Marmot' } },
    { tool: 'delete_deal', restore: 'restore_deal', create: 'create_deal', search: 'search_deals', get: 'get_deal', key: 'deal', list: 'deals', args: {}, body: { name: 'Mcp Marmot' } },
    { tool: 'delete_record', restore: 'restore_record', create: 'create_record', search: 'search_records', get: 'get_record', key: 'record', list: 'records', args: { object: 'parcels' }, body: { values: { title: 'Mcp Marmot' } } },
  ])('$tool trashes the item: gone from search and get, back after $restore; permanent removes it', async ({ tool, restore, create, search, get, key, list, args, body }) => {
    const created = (await callOk(client, create, { ...args, ...body }))[key];
    const trashed = (await callOk(client, tool, { ...args, id: created.id }))[key];
    expect(trashed.deletedAt).not.toBeNull();
    expect((await callOk(client, search, { ...args, q: 'marmot' }))[list]).toEqual([]);
    await callError(client, get, { ...args, id: created.id }, 'NOT_FOUND');
    await callError(client, tool, { ...args, id: created.id }, 'NOT_FOUND');
    expect((await callOk(client, search, { ...args, deleted: true }))[list].map((x: { id: string }) => x.id)).toEqual([created.id]);
    const restored = await callOk(client, restore, { ...args, id: created.id });
    expect(restored[key]).toMatchObject({ id: created.id, deletedAt: null });
    expect(restored).toEqual(await callOk(client, get, { ...args, id: created.id }));
    await callError(client, restore, { ...args, id: created.id }, 'NOT_FOUND');
    expect((await callOk(client, search, { ...args, q: 'marmot' }))[list].map((x: { id: string }) => x.id)).toEqual([created.id]);
    const events = async () => (await listEvents(t.ctx.database.db, s.orgId, { objectId: created.id })).map((e) => [e.type, e.data.actor.channel]);
    expect(await events()).toEqual([[`${key}.created`, 'MCP'], [`${key}.deleted`, 'MCP'], [`${key}.restored`, 'MCP']]);
    await callOk(client, tool, { ...args, id: created.id, permanent: true });
    await callError(client, restore, { ...args, id: created.id }, 'NOT_FOUND');
    // Removed for good: the earlier events that described it go too, and the purge is recorded.
    expect(await events()).toEqual([[`${key}.purged`, 'MCP']]);
  });

  it.each([
    { tool: 'delete_note', restore: 'restore_note', get: 'get_note', create: 'add_note', list: 'list_notes', key: 'note', plural: 'notes', body: { body: 'Wrong lead: meant for Bob' } },
    { tool: 'delete_task', restore: 'restore_task', get: 'get_task', create: 'create_task', list: 'search_tasks', key: 'task', plural: 'tasks', body: { title: 'Call the wrong Bob' } },
  ])('$tool trashes a $key: gone from its list, $get and the timeline, back after $restore; permanent removes it', async ({ tool, restore, get, create, list, key, plural, body }) => {
    const lead = (await callOk(client, 'create_lead', { name: `Target of ${key}` })).lead.id;
    const created = (await callOk(client, create, { ...body, target: { object: 'lead', id: lead } }))[key];
    const listed = async () => (await callOk(client, list, { targetId: lead }))[plural].map((x: { id: string }) => x.id);
    const onTimeline = async () => (await callOk(client, 'get_timeline', { object: 'lead', id: lead })).timeline.filter((e: { type: string }) => e.type === key).length;
    expect((await callOk(client, tool, { id: created.id }))[key].deletedAt).not.toBeNull();
    expect(await listed()).toEqual([]);
    expect(await onTimeline()).toBe(0);
    await callError(client, tool, { id: created.id }, 'NOT_FOUND');
    await callError(client, get, { id: created.id }, 'NOT_FOUND');
    const restored = await callOk(client, restore, { id: created.id });
    expect(restored[key]).toMatchObject({ id: created.id, deletedAt: null });
    expect(restored).toEqual(await callOk(client, get, { id: created.id }));
    expect(await listed()).toEqual([created.id]);
    expect(await onTimeline()).toBe(1);
    const restoredEvents = (await listEvents(t.ctx.database.db, s.orgId, { objectId: created.id })).map((e) => [e.type, e.data.actor.channel]);
    expect(restoredEvents).toEqual([[`${key}.created`, 'MCP'], [`${key}.deleted`, 'MCP'], [`${key}.restored`, 'MCP']]);
    await callOk(client, tool, { id: created.id, permanent: true });
    await callError(client, restore, { id: created.id }, 'NOT_FOUND');
    const events = (await listEvents(t.ctx.database.db, s.orgId, { objectId: created.id })).map((e) => [e.type, e.data.actor.channel]);
    expect(events).toEqual([[`${key}.purged`, 'MCP']]);
  });
});
