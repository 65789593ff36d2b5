import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { revokeApiKey } from '../../src/modules/orgs/orgs.service.js';
import type { TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { callError, callOk, connect, httpTransport, openMcp, rpc, type McpSetup } from '../helpers/mcp.js';
import { call } from '../helpers/http.js';

describe('MCP over Streamable HTTP', () => {
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

  it('identifies itself and lists its tools with JSON-schema inputs, descriptions and scopes', async () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'crm' });
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['search_leads', 'get_lead', 'create_lead', 'update_lead']));
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.description!.length).toBeGreaterThan(40);
      expect(tool.description).toMatch(/Needs the API key scope [a-z]+:[a-z]+/);
    }
    const create = tools.find((tool) => tool.name === 'create_lead')!;
    // Open beside the standard fields: the organization's custom lead fields go there (checked by the server).
    expect(create.inputSchema).toMatchObject({ required: ['name'], additionalProperties: true });
    expect(Object.keys(create.inputSchema.properties!)).toEqual(expect.arrayContaining(['name', 'email', 'phoneNumber', 'source']));
    expect(create.annotations).toMatchObject({ readOnlyHint: false });
    expect(tools.find((tool) => tool.name === 'search_leads')!.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('completes a create-then-search round trip', async () => {
    const { lead } = await callOk(client, 'create_lead', { name: 'Grace Hopper', email: 'Grace@Navy.example', phoneNumber: '+1 415 555 0111', source: 'REFERRAL' });
    expect(lead).toMatchObject({ name: 'Grace Hopper', email: 'grace@navy.example', phoneNumber: '+14155550111', status: 'NEW' });
    const byEmail = await callOk(client, 'search_leads', { q: 'grace@navy.example' });
    expect(byEmail.leads.map((l: { id: string }) => l.id)).toEqual([lead.id]);
    const byName = await callOk(client, 'search_leads', { q: 'hopp', limit: 5 });
    expect(byName.leads.map((l: { id: string }) => l.id)).toContain(lead.id);
    expect(byName.pagination).toMatchObject({ page: 1, limit: 5 });
    expect(await callOk(client, 'get_lead', { id: lead.id })).toEqual({ lead, etag: t.ctx.entityTagger.tagOf(lead) });
  });

  it('updates only the fields sent and records events with channel MCP', async () => {
    const { lead } = await callOk(client, 'create_lead', { name: 'Katherine Johnson', email: 'kj@example.com' });
    const updated = await callOk(client, 'update_lead', { id: lead.id, changes: { status: 'QUALIFIED', company: 'NASA' } });
    expect(updated.lead).toMatchObject({ id: lead.id, status: 'QUALIFIED', company: 'NASA', email: 'kj@example.com' });
    const events = await listEvents(t.ctx.database.db, s.orgId, { objectId: lead.id });
    expect(events.map((e) => e.type)).toEqual(['lead.created', 'lead.updated']);
    for (const event of events) expect(event.data.actor).toEqual({ type: 'API_KEY', id: s.keyId, channel: 'MCP' });
    expect(events[1]!.data.changes).toEqual({ before: { status: 'NEW', company: null }, after: { status: 'QUALIFIED', company: 'NASA' } });
  });

  it('returns validation failures as tool errors naming every bad field, and creates nothing', async () => {
    const { text, errors } = await callError(client, 'create_lead', { name: '', email: 'not-an-email', phoneNumber: '4155550100', colour: 'red' }, 'VALIDATION_FAILED');
    expect(errors.map((e) => e.field).sort()).toEqual(['colour', 'email', 'name', 'phoneNumber']);
    expect(text).toContain('- email (invalid_format): must be a valid e-mail address');
    expect(text).toContain('country code');
    expect((await callOk(client, 'search_leads', { q: 'not-an-email' })).leads).toEqual([]);
    const empty = await callError(client, 'update_lead', { id: 'x', changes: {} }, 'VALIDATION_FAILED');
    expect(empty.errors).toEqual([{ field: 'changes', code: 'empty', message: 'must contain at least one field' }]);
  });

  it('answers NOT_FOUND for an unknown id and for a lead of another organization', async () => {
    const other = await seedOrg(t.ctx);
    const otherClient = await connect(httpTransport(origin, other.key));
    const { lead } = await callOk(otherClient, 'create_lead', { name: 'Elsewhere' });
    await otherClient.close();
    await callError(client, 'get_lead', { id: lead.id }, 'NOT_FOUND');
    await callError(client, 'update_lead', { id: lead.id, changes: { name: 'Mine now' } }, 'NOT_FOUND');
    await callError(client, 'get_lead', { id: '000000000000000000000000' }, 'NOT_FOUND');
  });

  it('refuses a tool the key has no scope for, naming the scope, and writes nothing', async () => {
    const reader = await addKey(t.ctx, s.orgId, ['leads:read']);
    const readOnly = await connect(httpTransport(origin, reader.key));
    try {
      const { text } = await callError(readOnly, 'create_lead', { name: 'Nope' }, 'INSUFFICIENT_SCOPE');
      expect(text).toContain('leads:write');
      await callOk(readOnly, 'search_leads', {});
      expect((await callOk(readOnly, 'search_leads', { q: 'Nope' })).leads).toEqual([]);
      const writer = await addKey(t.ctx, s.orgId, ['leads:write']);
      const writeOnly = await connect(httpTransport(origin, writer.key));
      await callError(writeOnly, 'search_leads', {}, 'INSUFFICIENT_SCOPE');
      await writeOnly.close();
    } finally {
      await readOnly.close();
    }
  });

  it('rejects a missing, unknown or revoked key with 401 before any MCP exchange', async () => {
    const noKey = await fetch(`${origin}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get('www-authenticate')).toMatch(/^Bearer/);
    await expect(connect(httpTransport(origin, 'crm_live_unknownunknownunknownunknown'))).rejects.toMatchObject({ code: 401 });
    const doomed = await addKey(t.ctx, s.orgId, ['leads:read']);
    const doomedClient = await connect(httpTransport(origin, doomed.key));
    await callOk(doomedClient, 'search_leads', {});
    await revokeApiKey(t.ctx, doomed.keyId);
    await expect(doomedClient.callTool({ name: 'search_leads', arguments: {} })).rejects.toMatchObject({ code: 401 });
  });

  it('counts every MCP request against the key rate limit, with the REST headers and 429', async () => {
    const limited = await addKey(t.ctx, s.orgId, ['leads:read'], { rateLimitPerMinute: 3 });
    const listTools = () =>
      fetch(`${origin}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${limited.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const remaining = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await listTools();
      expect(res.status).toBe(200);
      remaining.push(res.headers.get('x-ratelimit-remaining'));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const refused = await listTools();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED' });
    await expect(connect(httpTransport(origin, limited.key))).rejects.toMatchObject({ code: 429 });
  });

  it('spends one unit per message of a JSON-RPC batch: a batch that does not fit is refused whole', async () => {
    const org = await seedOrg(t.ctx, { scopes: ['leads:write'], rateLimitPerMinute: 250 });
    const counter = await addKey(t.ctx, org.orgId, ['leads:read']);
    const batch = (n: number, from: number) =>
      Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: from + i, method: 'tools/call', params: { name: 'create_lead', arguments: { name: `Batched ${from + i}` } } }));
    const answers = [];
    for (const from of [0, 100, 200]) answers.push(await rpc(origin, org.key, batch(100, from)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 429]);
    expect(answers.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['150', '50', '49']);
    const first = (await answers[0]!.json()) as { id: number; result: { isError?: boolean } }[];
    expect(first).toHaveLength(100);
    expect(first.every((m) => !m.result.isError)).toBe(true);
    expect(await answers[2]!.json()).toMatchObject({ code: 'RATE_LIMITED' });
    const leads = await call(t.app, 'GET', '/leads', { auth: counter.auth });
    expect(leads.body.data.pagination.total).toBe(200);
    // More messages than the key may ever spend in a window: refused as invalid, not "retry later".
    const small = await seedOrg(t.ctx, { scopes: ['leads:write'], rateLimitPerMinute: 20 });
    const tooBig = await rpc(origin, small.key, batch(21, 0));
    expect(tooBig.status).toBe(400);
    expect(await tooBig.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(tooBig.headers.get('x-ratelimit-remaining')).toBe('19');
    // An empty batch is JSON-RPC's Invalid Request, answered (not a silent 202).
    const empty = await rpc(origin, small.key, []);
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: an empty batch' } });
  });

  it('answers tools/call with malformed arguments or no tool name with -32602 Invalid params', async () => {
    for (const params of [{ name: 'create_lead', arguments: 'name=x' }, { name: 'create_lead', arguments: [1, 2] }, { arguments: {} }]) {
      const res = await rpc(origin, s.key, { jsonrpc: '2.0', id: 7, method: 'tools/call', params });
      expect(res.status).toBe(200);
      expect(await res.json(), JSON.stringify(params)).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32602 } });
    }
  });

  it('prefixes a protocol error once in the SDK client ("MCP error -32602: …"), ours and the SDK server\'s alike', async () => {
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/^MCP error -32602: Unknown tool no_such_tool$/);
    const malformed = { method: 'tools/call', params: { name: 'create_lead', arguments: 'name=x' } } as unknown as CallToolRequest;
    await expect(client.request(malformed, CallToolResultSchema)).rejects.toThrow(/^MCP error -32602: Invalid tools\/call request: (?!MCP error)/);
    const raw = await rpc(origin, s.key, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } });
    expect(await raw.json()).toEqual({ jsonrpc: '2.0', id: 8, error: { code: -32602, message: 'Unknown tool no_such_tool' } });
  });

  it('puts the request id and rate-limit headers on MCP answers too', async () => {
    const res = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('ratelimit-policy')).toBe('"default";q=120;w=60');
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'crm' } } });
  });

  it('answers 405 to GET and DELETE: the endpoint keeps no sessions', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${origin}/mcp`, { method, headers: { authorization: `Bearer ${s.key}`, accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toMatchObject({ status: false, code: 'METHOD_NOT_ALLOWED' });
    }
  });
});
