import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { callError, callOk, openMcp, type McpSetup } from '../helpers/mcp.js';
import { call, expectError } from '../helpers/http.js';

/** The create tools' `idempotencyKey`: REST's Idempotency-Key, through the SDK's client over Streamable HTTP. */
describe('MCP create tools with idempotencyKey', () => {
  let mcp: McpSetup | undefined;
  let t: TestApp;
  let s: Seeded;
  let client: Client;
  let leadId: string;

  beforeAll(async () => {
    mcp = await openMcp();
    ({ t, s, client } = mcp);
    const object = { slug: 'tickets', name: 'Tickets', fields: [{ key: 'title', label: 'Title', type: 'text', required: true }] };
    expect((await call(t.app, 'POST', '/objects', { auth: s.auth, body: object })).status).toBe(201);
    leadId = (await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Target' } })).body.data.lead.id;
  });
  afterAll(() => mcp?.close());

  const rest = (path: string, key: string, body: unknown) => call(t.app, 'POST', path, { auth: s.auth, body, headers: { 'idempotency-key': key } });
  const leadsNamed = async (name: string) => (await call(t.app, 'GET', `/leads?q=${encodeURIComponent(name)}`, { auth: s.auth })).body.data.pagination.total;

  it('offers idempotencyKey on exactly the tools that create, and says so in their descriptions', async () => {
    const { tools } = await client.listTools();
    const keyed = tools.filter((tool) => 'idempotencyKey' in (tool.inputSchema.properties ?? {}));
    expect(keyed.map((tool) => tool.name).sort()).toEqual(['add_note', 'create_account', 'create_deal', 'create_lead', 'create_record', 'create_task']);
    for (const tool of keyed) {
      expect(tool.inputSchema.properties!.idempotencyKey).toMatchObject({ type: 'string', minLength: 1, maxLength: 255 });
      expect(tool.inputSchema.required ?? []).not.toContain('idempotencyKey');
      expect(tool.description).toContain('`idempotencyKey`');
    }
  });

  it('a retried create_lead with the same key returns the first result: one lead, one event', async () => {
    const args = { name: 'Retried Lead', email: 'retried@example.com', idempotencyKey: 'mcp-retry-1' };
    const first = await callOk(client, 'create_lead', args);
    const again = await callOk(client, 'create_lead', { idempotencyKey: 'mcp-retry-1', email: 'retried@example.com', name: 'Retried Lead' });
    expect(again).toEqual(first);
    expect(await leadsNamed('Retried Lead')).toBe(1);
    expect(await listEvents(t.ctx.database.db, s.orgId, { objectId: first.lead.id })).toHaveLength(1);
    // Without a key every call creates, as before.
    await callOk(client, 'create_lead', { name: 'Unkeyed Lead' });
    await callOk(client, 'create_lead', { name: 'Unkeyed Lead' });
    expect(await leadsNamed('Unkeyed Lead')).toBe(2);
  });

  it('shares the key space and request hash with REST, both ways', async () => {
    const byRest = await rest('/leads', 'shared-rest-first', { name: 'Rest First' });
    expect(byRest.status).toBe(201);
    expect(await callOk(client, 'create_lead', { name: 'Rest First', idempotencyKey: 'shared-rest-first' })).toEqual(byRest.body.data);

    const byMcp = await callOk(client, 'create_lead', { name: 'Mcp First', idempotencyKey: 'shared-mcp-first' });
    const replay = await rest('/leads', 'shared-mcp-first', { name: 'Mcp First' });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.data).toEqual(byMcp);
    expect(await leadsNamed('Rest First')).toBe(1);
    expect(await leadsNamed('Mcp First')).toBe(1);
  });

  it('refuses the same key with other arguments with the error REST gives, and creates nothing', async () => {
    await callOk(client, 'create_lead', { name: 'Reused Key', idempotencyKey: 'reused-1' });
    const refused = await client.callTool({ name: 'create_lead', arguments: { name: 'Reused Key!', idempotencyKey: 'reused-1' } });
    const byRest = await rest('/leads', 'reused-1', { name: 'Reused Key!' });
    expectError(byRest, 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toEqual({ status: false, code: 'IDEMPOTENCY_KEY_REUSED', message: byRest.body.message });
    // Another tool (another REST path) under the same key is another request too.
    await callError(client, 'create_account', { name: 'Reused Key', idempotencyKey: 'reused-1' }, 'IDEMPOTENCY_KEY_REUSED');
    expect(await leadsNamed('Reused Key!')).toBe(0);
  });

  it('makes every create tool safe to retry', async () => {
    const creates: [tool: string, args: Record<string, unknown>, resource: string][] = [
      ['create_account', { name: 'Retried Account' }, 'account'],
      ['create_deal', { name: 'Retried Deal', amount: '10.00', currency: 'EUR' }, 'deal'],
      ['create_record', { object: 'tickets', values: { title: 'Retried Ticket' } }, 'record'],
      ['add_note', { target: { object: 'lead', id: leadId }, body: 'Retried note' }, 'note'],
      ['create_task', { title: 'Retried task', target: { object: 'lead', id: leadId } }, 'task'],
    ];
    for (const [tool, args, resource] of creates) {
      const keyed = { ...args, idempotencyKey: `every-${tool}` };
      const first = await callOk(client, tool, keyed);
      expect(await callOk(client, tool, keyed), tool).toEqual(first);
      const events = await listEvents(t.ctx.database.db, s.orgId, { objectId: first[resource].id });
      expect(events.map((e) => e.type), tool).toEqual([`${resource}.created`]);
    }
    // The record's REST twin is POST /objects/{slug}/records with the values as its body.
    const record = await rest('/objects/tickets/records', 'every-create_record', { title: 'Retried Ticket' });
    expect(record.headers['idempotent-replayed']).toBe('true');
  });

  it('runs simultaneous retries once: one lead, the others replay or are told to retry', async () => {
    const args = { name: 'Racing Lead', idempotencyKey: 'race-mcp' };
    const results = await Promise.all(Array.from({ length: 8 }, () => client.callTool({ name: 'create_lead', arguments: args })));
    const created = results.filter((r) => !r.isError).map((r) => (r.structuredContent as { lead: { id: string } }).lead.id);
    const busy = results.filter((r) => r.isError).map((r) => (r.structuredContent as { code: string }).code);
    expect(new Set(created).size).toBe(1);
    expect(new Set(busy)).toEqual(new Set(busy.length ? ['IDEMPOTENCY_KEY_IN_USE'] : []));
    expect(await leadsNamed('Racing Lead')).toBe(1);
  });

  it('checks the key like the other arguments, and refuses it on tools that do not create', async () => {
    const { errors } = await callError(client, 'create_lead', { name: '', idempotencyKey: 'x'.repeat(256) }, 'VALIDATION_FAILED');
    expect(errors.map((e) => [e.field, e.code]).sort()).toEqual([['idempotencyKey', 'too_long'], ['name', 'too_short']]);
    expect((await callError(client, 'create_lead', { name: 'Tab', idempotencyKey: 'tab\tkey' }, 'VALIDATION_FAILED')).errors).toEqual([
      { field: 'idempotencyKey', code: 'invalid_format', message: 'has an invalid format' },
    ]);
    // A refused call stores nothing: the corrected retry under the same key creates.
    await callError(client, 'create_lead', { name: '', idempotencyKey: 'fixed-later' }, 'VALIDATION_FAILED');
    expect((await callOk(client, 'create_lead', { name: 'Fixed Later', idempotencyKey: 'fixed-later' })).lead.name).toBe('Fixed Later');
    const updated = await callError(client, 'update_lead', { id: leadId, changes: { name: 'X' }, idempotencyKey: 'k' }, 'VALIDATION_FAILED');
    expect(updated.errors).toEqual([{ field: 'idempotencyKey', code: 'unknown_field', message: 'is not a known field' }]);
  });
});
