import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { callError, callOk, openMcp, type McpSetup } from '../helpers/mcp.js';
import { call } from '../helpers/http.js';

/** The search tools' `filter[…]` arguments take the JSON an agent writes: numbers and booleans where the field's type gives them meaning. */
describe('MCP field filters', () => {
  let mcp: McpSetup | undefined;
  let t: TestApp;
  let s: Seeded;
  let client: Client;
  const ids = (list: { id: string }[]) => list.map((x) => x.id).sort();

  beforeAll(async () => {
    mcp = await openMcp();
    ({ t, s, client } = mcp);
    const fields = [
      { key: 'title', label: 'Title', type: 'text' },
      { key: 'amount', label: 'Amount', type: 'number' },
      { key: 'done', label: 'Done', type: 'boolean' },
      { key: 'due', label: 'Due', type: 'date' },
    ];
    expect((await call(t.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'orders', name: 'Orders', fields } })).status).toBe(201);
    expect((await call(t.app, 'PATCH', '/objects/leads', { auth: s.auth, body: { fields: [{ key: 'score', label: 'Score', type: 'number' }, { key: 'vip', label: 'VIP', type: 'boolean' }] } })).status).toBe(200);
  });
  afterAll(() => mcp?.close());

  it('search_records takes a number for a number field and a boolean for a boolean field, as the text REST takes still works', async () => {
    const order = async (title: string, amount: number, done: boolean) => (await call(t.app, 'POST', '/objects/orders/records', { auth: s.auth, body: { title, amount, done } })).body.data.record.id as string;
    const small = await order('small', 3, false);
    const large = await order('large', 150, true);
    const huge = await order('huge', 1200.5, false);
    const search = async (args: Record<string, unknown>) => ids((await callOk(client, 'search_records', { object: 'orders', ...args })).records);
    expect(await search({ 'filter[amount]': 3 })).toEqual([small]);
    expect(await search({ 'filter[amount][gte]': 100 })).toEqual([huge, large].sort());
    expect(await search({ 'filter[amount][gt]': 150, 'filter[amount][lt]': 1200.6 })).toEqual([huge]);
    expect(await search({ 'filter[done]': true })).toEqual([large]);
    expect(await search({ 'filter[done]': false, 'filter[amount][lte]': 10 })).toEqual([small]);
    expect(await search({ 'filter[amount][gte]': '100', 'filter[done]': 'true' })).toEqual([large]);
  });

  it('refuses a JSON type the field gives no meaning to, naming the parameter and the field', async () => {
    const { errors, text } = await callError(
      client,
      'search_records',
      { object: 'orders', 'filter[title]': 3, 'filter[amount]': true, 'filter[done]': 1, 'filter[due][gte]': 20270101 },
      'VALIDATION_FAILED',
    );
    expect(errors).toEqual([
      { field: 'filter[title]', code: 'invalid_type', message: 'must be a string, the text to match: title is a text field' },
      { field: 'filter[amount]', code: 'invalid_type', message: 'must be a number (or its text): amount is a number field' },
      { field: 'filter[done]', code: 'invalid_type', message: 'must be true or false (or their text): done is a boolean field' },
      { field: 'filter[due][gte]', code: 'invalid_type', message: 'must be a string, a date (YYYY-MM-DD): due is a date field' },
    ]);
    expect(text).toContain('- filter[title] (invalid_type): must be a string');
    // Neither a string, a number nor a boolean: refused by the schema before the service, named as sent.
    const nested = await callError(client, 'search_records', { object: 'orders', 'filter[amount]': { gte: 100 } }, 'VALIDATION_FAILED');
    expect(nested.errors).toEqual([{ field: 'filter[amount]', code: 'invalid_type', message: 'must be string or number or boolean' }]);
    const text2 = await callError(client, 'search_records', { object: 'orders', 'filter[amount]': 'lots' }, 'VALIDATION_FAILED');
    expect(text2.errors).toEqual([{ field: 'filter[amount]', code: 'invalid_value', message: 'must be a number' }]);
  });

  it('search_leads takes them on custom lead fields too, which tools/list types', async () => {
    const lead = async (name: string, score: number, vip: boolean) => (await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name, score, vip } })).body.data.lead.id as string;
    const low = await lead('Low Scorer', 10, false);
    const high = await lead('High Scorer', 90, true);
    expect(ids((await callOk(client, 'search_leads', { 'filter[score][gte]': 50 })).leads)).toEqual([high]);
    expect(ids((await callOk(client, 'search_leads', { 'filter[vip]': false, 'filter[score]': 10 })).leads)).toEqual([low]);
    const { errors } = await callError(client, 'search_leads', { 'filter[vip]': 'yes' }, 'VALIDATION_FAILED');
    expect(errors).toEqual([{ field: 'filter[vip]', code: 'invalid_value', message: 'must be true or false' }]);
    const { tools } = await client.listTools();
    const properties = (tools.find((tool) => tool.name === 'search_leads')!.inputSchema as { properties: Record<string, { type?: string }> }).properties;
    expect([properties['filter[score][gte]']?.type, properties['filter[vip]']?.type]).toEqual(['number', 'boolean']);
  });
});
