import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { MCP_TOOLS } from '../../src/modules/mcp/tools/index.js';
import type { TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { callError, callOk, connect, httpTransport, openMcp, type McpSetup } from '../helpers/mcp.js';
import { call } from '../helpers/http.js';

/** The resource tools beyond leads, through the SDK's client over Streamable HTTP. */
describe('MCP tools', () => {
  let mcp: McpSetup | undefined;
  let t: TestApp;
  let origin: string;
  let s: Seeded;
  let other: Seeded;
  let client: Client;
  let otherClient: Client;
  const mcpActor = () => ({ type: 'API_KEY', id: s.keyId, channel: 'MCP' });

  beforeAll(async () => {
    mcp = await openMcp();
    ({ t, origin, s, client } = mcp);
    other = await seedOrg(t.ctx);
    otherClient = await connect(httpTransport(origin, other.key));
  });
  afterAll(async () => {
    await otherClient?.close();
    await mcp?.close();
  });

  it('refuses every tool to a key without its scope, before validating the input', async () => {
    const unrelated = await addKey(t.ctx, s.orgId, ['webhooks:read']);
    const outsider = await connect(httpTransport(origin, unrelated.key));
    try {
      for (const tool of MCP_TOOLS) {
        const { text } = await callError(outsider, tool.name, {}, 'INSUFFICIENT_SCOPE');
        for (const scope of tool.scopes) expect(text).toContain(scope);
      }
    } finally {
      await outsider.close();
    }
  });

  it('needs the scope of the REST route each tool stands for', async () => {
    const id = 'abcdefabcdefabcdefabcdef';
    const rest: Record<string, [string, string]> = {};
    for (const [noun, plural] of [['lead', 'leads'], ['account', 'accounts'], ['deal', 'deals'], ['record', 'objects/parcels/records'], ['note', 'notes'], ['task', 'tasks']] as const) {
      Object.assign(rest, {
        [`get_${noun}`]: ['GET', `/${plural}/${id}`],
        [`update_${noun}`]: ['PATCH', `/${plural}/${id}`],
        [`delete_${noun}`]: ['DELETE', `/${plural}/${id}`],
        [`restore_${noun}`]: ['POST', `/${plural}/${id}/restore`],
      });
    }
    Object.assign(rest, {
      search_leads: ['GET', '/leads'], create_lead: ['POST', '/leads'],
      search_accounts: ['GET', '/accounts'], create_account: ['POST', '/accounts'],
      list_deal_stages: ['GET', '/deal-stages'], search_deals: ['GET', '/deals'], create_deal: ['POST', '/deals'], move_deal_stage: ['PATCH', `/deals/${id}`],
      list_objects: ['GET', '/objects'], describe_object: ['GET', '/objects/parcels'], search_records: ['GET', '/objects/parcels/records'], create_record: ['POST', '/objects/parcels/records'],
      list_users: ['GET', '/users'],
      add_note: ['POST', '/notes'], list_notes: ['GET', '/notes'],
      create_task: ['POST', '/tasks'], search_tasks: ['GET', '/tasks'], complete_task: ['PATCH', `/tasks/${id}`],
      get_timeline: ['GET', `/leads/${id}/timeline`],
    });
    // get_timeline needs the read scope of the item's kind: any of them to be called, the REST route's for a lead.
    const scopesOf = (tool: string) => (tool === 'get_timeline' ? ['leads:read'] : MCP_TOOLS.find((x) => x.name === tool)!.scopes);
    expect(Object.keys(rest).sort()).toEqual(MCP_TOOLS.map((tool) => tool.name).sort());
    const unrelated = await addKey(t.ctx, s.orgId, ['webhooks:read']);
    const mismatched = [];
    for (const [tool, [method, path]] of Object.entries(rest)) {
      const res = await call(t.app, method as 'GET', path, { auth: unrelated.auth });
      expect(res.body.code, `${tool}: ${method} ${path}`).toBe('INSUFFICIENT_SCOPE');
      const needed = /needs the scope (.+)$/.exec(res.body.message)![1]!.split(' or ');
      if (needed.join() !== scopesOf(tool).join()) mismatched.push(`${tool}: ${scopesOf(tool).join(' or ')} (REST: ${needed.join(' or ')})`);
    }
    expect(mismatched).toEqual([]);
  });

  it('requires no argument that has a default (page, limit): clients may leave them out', async () => {
    type Schema = { properties?: Record<string, Schema>; required?: string[]; default?: unknown };
    const requiredWithDefault = (schema: Schema, at: string): string[] =>
      Object.entries(schema.properties ?? {}).flatMap(([name, property]) => [
        ...((schema.required ?? []).includes(name) && property.default !== undefined ? [`${at}.${name}`] : []),
        ...requiredWithDefault(property, `${at}.${name}`),
      ]);
    const { tools } = await client.listTools();
    expect(tools.flatMap((tool) => requiredWithDefault(tool.inputSchema as Schema, tool.name))).toEqual([]);
    expect(tools.find((tool) => tool.name === 'search_leads')!.inputSchema.properties).toHaveProperty('page');
    const result = await callOk(client, 'search_leads', {});
    expect(result.pagination).toMatchObject({ page: 1, limit: 25 });
  });

  describe('accounts', () => {
    it('create, search, get and update, with events on channel MCP', async () => {
      const { account } = await callOk(client, 'create_account', { name: 'Analytical Engines Ltd', domain: 'Analytical.example', email: 'hello@analytical.example' });
      expect(account).toMatchObject({ name: 'Analytical Engines Ltd', domain: 'analytical.example' });
      expect((await callOk(client, 'search_accounts', { q: 'engines' })).accounts.map((a: { id: string }) => a.id)).toEqual([account.id]);
      expect((await callOk(client, 'search_accounts', { q: 'hello@analytical.example' })).accounts).toHaveLength(1);
      expect(await callOk(client, 'get_account', { id: account.id })).toEqual({ account, etag: t.ctx.entityTagger.tagOf(account) });
      const { account: updated } = await callOk(client, 'update_account', { id: account.id, changes: { industry: 'Computing' } });
      expect(updated.industry).toBe('Computing');
      const events = await listEvents(t.ctx.database.db, s.orgId, { objectId: account.id });
      expect(events.map((e) => [e.type, e.data.actor])).toEqual([['account.created', mcpActor()], ['account.updated', mcpActor()]]);
    });

    it('validates like REST and hides other organizations', async () => {
      const { errors } = await callError(client, 'create_account', { name: 'X', website: 'ftp://nope', email: 'bad' }, 'VALIDATION_FAILED');
      expect(errors.map((e) => e.field).sort()).toEqual(['email', 'website']);
      const { account } = await callOk(otherClient, 'create_account', { name: 'Theirs' });
      await callError(client, 'get_account', { id: account.id }, 'NOT_FOUND');
      await callError(client, 'update_account', { id: account.id, changes: { name: 'Mine' } }, 'NOT_FOUND');
    });
  });

  describe('users', () => {
    it('list_users lists the organization\'s people, the ids ownerId takes', async () => {
      const result = await callOk(client, 'list_users', {});
      expect(result.users).toEqual([expect.objectContaining({ id: s.userId, role: 'member', active: true, email: expect.stringContaining('@example.com') })]);
      expect(result.pagination).toMatchObject({ page: 1, total: 1 });
      expect((await callOk(otherClient, 'list_users', {})).users.map((u: { id: string }) => u.id)).toEqual([other.userId]);
    });
  });

  describe('deals', () => {
    it('lists the stages, creates a deal, searches by stage and moves it along the pipeline', async () => {
      const { stages } = await callOk(client, 'list_deal_stages', {});
      expect(stages.map((st: { key: string }) => st.key)).toEqual(['qualification', 'proposal', 'negotiation', 'won', 'lost']);
      const { deal } = await callOk(client, 'create_deal', { name: 'Forty seats', amount: '48000.50', currency: 'eur', expectedCloseDate: '2026-03-31' });
      expect(deal).toMatchObject({ stage: 'qualification', amount: '48000.50', currency: 'EUR', expectedCloseDate: '2026-03-31T00:00:00.000Z' });
      const moved = await callOk(client, 'move_deal_stage', { id: deal.id, stage: 'won' });
      expect(moved.deal).toMatchObject({ id: deal.id, stage: 'won' });
      expect((await callOk(client, 'search_deals', { stage: 'won' })).deals.map((d: { id: string }) => d.id)).toEqual([deal.id]);
      expect((await callOk(client, 'search_deals', { stage: 'qualification', q: 'seats' })).deals).toEqual([]);
      await callOk(client, 'update_deal', { id: deal.id, changes: { amount: '50000' } });
      expect((await callOk(client, 'get_deal', { id: deal.id })).deal).toMatchObject({ stage: 'won', amount: '50000' });
      const events = await listEvents(t.ctx.database.db, s.orgId, { objectId: deal.id });
      expect(events.map((e) => [e.type, e.data.actor])).toEqual([
        ['deal.created', mcpActor()],
        ['deal.stage_changed', mcpActor()],
        ['deal.updated', mcpActor()],
      ]);
      expect(events[1]!.data.changes).toEqual({ before: { stage: 'qualification' }, after: { stage: 'won' } });
    });

    it('refuses an unknown stage naming the allowed keys, and hides other organizations', async () => {
      const { deal } = await callOk(client, 'create_deal', { name: 'Stuck' });
      const { errors } = await callError(client, 'move_deal_stage', { id: deal.id, stage: 'celebrating' }, 'VALIDATION_FAILED');
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ field: 'stage' });
      expect(errors[0]!.message).toContain('negotiation');
      await callError(client, 'move_deal_stage', { id: deal.id }, 'VALIDATION_FAILED');
      const theirs = await callOk(otherClient, 'create_deal', { name: 'Theirs' });
      await callError(client, 'move_deal_stage', { id: theirs.deal.id, stage: 'won' }, 'NOT_FOUND');
      await callError(client, 'get_deal', { id: theirs.deal.id }, 'NOT_FOUND');
    });
  });

  describe('custom objects and records', () => {
    const projects = {
      slug: 'projects',
      name: 'Projects',
      fields: [
        { key: 'title', label: 'Title', type: 'text', required: true },
        { key: 'priority', label: 'Priority', type: 'select', options: ['low', 'high'] },
        { key: 'due_on', label: 'Due on', type: 'date', role: 'due' },
      ],
      stages: [{ key: 'planned', label: 'Planned' }, { key: 'done', label: 'Done' }],
    };

    beforeAll(async () => {
      expect((await call(t.app, 'POST', '/objects', { auth: s.auth, body: projects })).status).toBe(201);
    });

    it('lists the objects and describes their fields', async () => {
      const { objects } = await callOk(client, 'list_objects', {});
      // The built-in resources close the list: custom fields are defined on them the same way (contract §9).
      expect(objects.map((o: { slug: string }) => o.slug)).toEqual(['projects', 'leads', 'accounts', 'deals']);
      const { object } = await callOk(client, 'describe_object', { object: 'projects' });
      expect(object.fields).toEqual([
        { key: 'title', label: 'Title', type: 'text', required: true },
        { key: 'priority', label: 'Priority', type: 'select', required: false, options: ['low', 'high'] },
        { key: 'due_on', label: 'Due on', type: 'date', required: false, role: 'due' },
      ]);
      expect(object.stages.map((st: { key: string }) => st.key)).toEqual(['planned', 'done']);
      expect((await callOk(otherClient, 'list_objects', {})).objects.map((o: { slug: string }) => o.slug)).toEqual(['leads', 'accounts', 'deals']);
      await callError(otherClient, 'describe_object', { object: 'projects' }, 'NOT_FOUND');
    });

    it('creates, searches, gets and updates records, with events on channel MCP', async () => {
      const { record } = await callOk(client, 'create_record', { object: 'projects', values: { title: 'Website relaunch', priority: 'high', due_on: '2026-03-01' } });
      expect(record).toMatchObject({ objectSlug: 'projects', stage: 'planned', title: 'Website relaunch', due_on: '2026-03-01T00:00:00.000Z' });
      const found = await callOk(client, 'search_records', { object: 'projects', q: 'RELAUNCH', stage: 'planned' });
      expect(found.records.map((r: { id: string }) => r.id)).toEqual([record.id]);
      expect(await callOk(client, 'get_record', { object: 'projects', id: record.id })).toEqual({ record, etag: t.ctx.entityTagger.tagOf(record) });
      const moved = await callOk(client, 'update_record', { object: 'projects', id: record.id, changes: { stage: 'done', priority: 'low' } });
      expect(moved.record).toMatchObject({ stage: 'done', priority: 'low' });
      const events = await listEvents(t.ctx.database.db, s.orgId, { objectId: record.id });
      expect(events.map((e) => e.type).sort()).toEqual(['record.created', 'record.stage_changed', 'record.updated']);
      for (const event of events) expect(event.data).toMatchObject({ actor: mcpActor(), objectSlug: 'projects' });
    });

    it('checks values against the definition, listing every bad field, and hides other organizations', async () => {
      const { errors } = await callError(client, 'create_record', { object: 'projects', values: { priority: 'urgent', colour: 'red' } }, 'VALIDATION_FAILED');
      expect(errors.map((e) => e.field).sort()).toEqual(['values.colour', 'values.priority', 'values.title']);
      await callError(client, 'create_record', { object: 'projects' }, 'VALIDATION_FAILED');
      await callError(client, 'create_record', { object: 'nothing-here', values: { title: 'x' } }, 'NOT_FOUND');
      const { record } = await callOk(client, 'create_record', { object: 'projects', values: { title: 'Ours' } });
      await callError(otherClient, 'get_record', { object: 'projects', id: record.id }, 'NOT_FOUND');
      await callError(otherClient, 'update_record', { object: 'projects', id: record.id, changes: { title: 'Theirs' } }, 'NOT_FOUND');
    });
  });
});
