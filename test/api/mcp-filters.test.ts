import { beforeAll, describe, expect, it } from 'vitest';
import { callError, callOk, useMcp } from '../helpers/mcp.js';
import { call } from '../helpers/http.js';

const mcp = useMcp();

/** The search tools' `filter[…]` arguments take the JSON an agent writes: numbers and booleans where the field's type gives them meaning. */
describe('MCP field filters', () => {
  const ids = (list: { id: string }[]) => list.map((x) => x.id).sort();

  beforeAll(async () => {
    const fields = [
      { key: 'title', label: 'Title', type: 'text' },
      { key: 'amount', label: 'Amount', type: 'number' },
      { key: 'done', label: 'Done', type: 'boolean' },
      { key: 'due', label: 'Due', type: 'date' },
    ];
    expect((await call(mcp.t.app, 'POST', '/objects', { auth: mcp.s.auth, body: { slug: 'orders', name: 'Orders', fields } })).status).toBe(201);
    expect((await call(mcp.t.app, 'PATCH', '/objects/leads', { auth: mcp.s.auth, body: { fields: [{ key: 'score', label: 'Score', type: 'number' }, { key: 'vip', label: 'VIP', type: 'boolean' }] } })).status).toBe(200);
  });

  it('search_records takes a number for a number field and a boolean for a boolean field, as the text REST takes still works', async () => {
    const order = async (title: string, amount: number, done: boolean) => (await call(mcp.t.app, 'POST', '/objects/orders/records', { auth: mcp.s.auth, body: { title, amount, done } })).body.data.record.id as string;
    const small = await order('small', 3, false);
    const large = await order('large', 150, true);
    const huge = await order('huge', 1200.5, false);
    const search = async (args: Record<string, unknown>) => ids((await callOk(mcp.client, 'search_records', { object: 'orders', ...args })).records);
    expect(await search({ 'filter[amount]': 3 })).toEqual([small]);
    expect(await search({ 'filter[amount][gte]': 100 })).toEqual([huge, large].sort());
    expect(await search({ 'filter[amount][gt]': 150, 'filter[amount][lt]': 1200.6 })).toEqual([huge]);
    expect(await search({ 'filter[done]': true })).toEqual([large]);
    expect(await search({ 'filter[done]': false, 'filter[amount][lte]': 10 })).toEqual([small]);
    expect(await search({ 'filter[amount][gte]': '100', 'filter[done]': 'true' })).toEqual([large]);
  });

  it('refuses a JSON type the field gives no meaning to, naming the parameter and the field', async () => {
    const { errors, text } = await callError(
      mcp.client,
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
    const nested = await callError(mcp.client, 'search_records', { object: 'orders', 'filter[amount]': { gte: 100 } }, 'VALIDATION_FAILED');
    expect(nested.errors).toEqual([{ field: 'filter[amount]', code: 'invalid_type', message: 'must be string or number or boolean' }]);
    const text2 = await callError(mcp.client, 'search_records', { object: 'orders', 'filter[amount]': 'lots' }, 'VALIDATION_FAILED');
    expect(text2.errors).toEqual([{ field: 'filter[amount]', code: 'invalid_value', message: 'must be a number' }]);
  });

  it('search_leads takes them on custom lead fields too, which tools/list types', async () => {
    const lead = async (name: string, score: number, vip: boolean) => (await call(mcp.t.app, 'POST', '/leads', { auth: mcp.s.auth, body: { name, score, vip } })).body.data.lead.id as string;
    const low = await lead('Low Scorer', 10, false);
    const high = await lead('High Scorer', 90, true);
    expect(ids((await callOk(mcp.client, 'search_leads', { 'filter[score][gte]': 50 })).leads)).toEqual([high]);
    expect(ids((await callOk(mcp.client, 'search_leads', { 'filter[vip]': false, 'filter[score]': 10 })).leads)).toEqual([low]);
    const { errors } = await callError(mcp.client, 'search_leads', { 'filter[vip]': 'yes' }, 'VALIDATION_FAILED');
    expect(errors).toEqual([{ field: 'filter[vip]', code: 'invalid_value', message: 'must be true or false' }]);
    const { tools } = await mcp.client.listTools();
    const properties = (tools.find((tool) => tool.name === 'search_leads')!.inputSchema as { properties: Record<string, { type?: string }> }).properties;
    expect([properties['filter[score][gte]']?.type, properties['filter[vip]']?.type]).toEqual(['number', 'boolean']);
  });
});

/** The list tools' arguments stand for a query string: booleans may come as their text, an externalId as a whole number. */
describe('MCP list arguments as an agent writes them', () => {
  it('takes a JSON number for externalId as its digits, on leads, accounts, deals and records', async () => {
    const lead = (await call(mcp.t.app, 'POST', '/leads', { auth: mcp.s.auth, body: { name: 'ERP 4711', externalId: '4711' } })).body.data.lead.id;
    await call(mcp.t.app, 'POST', '/leads', { auth: mcp.s.auth, body: { name: 'ERP 47110', externalId: '47110' } });
    const account = (await call(mcp.t.app, 'POST', '/accounts', { auth: mcp.s.auth, body: { name: 'ERP Co', externalId: '-12' } })).body.data.account.id;
    const deal = (await call(mcp.t.app, 'POST', '/deals', { auth: mcp.s.auth, body: { name: 'ERP deal', externalId: '0' } })).body.data.deal.id;
    await call(mcp.t.app, 'POST', '/objects', { auth: mcp.s.auth, body: { slug: 'invoices', name: 'Invoices', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
    const record = (await call(mcp.t.app, 'POST', '/objects/invoices/records', { auth: mcp.s.auth, body: { title: 'inv', externalId: '9007199254740991' } })).body.data.record.id;
    const ids = (list: { id: string }[]) => list.map((x) => x.id);
    expect(ids((await callOk(mcp.client, 'search_leads', { externalId: 4711 })).leads)).toEqual([lead]);
    expect(ids((await callOk(mcp.client, 'search_leads', { externalId: '4711' })).leads)).toEqual([lead]);
    expect(ids((await callOk(mcp.client, 'search_accounts', { externalId: -12 })).accounts)).toEqual([account]);
    expect(ids((await callOk(mcp.client, 'search_deals', { externalId: 0 })).deals)).toEqual([deal]);
    expect(ids((await callOk(mcp.client, 'search_records', { object: 'invoices', externalId: 9007199254740991 })).records)).toEqual([record]);
  });

  it('takes "true" and "false" for its boolean arguments', async () => {
    const gone = (await call(mcp.t.app, 'POST', '/leads', { auth: mcp.s.auth, body: { name: 'Trashed for MCP' } })).body.data.lead.id;
    await call(mcp.t.app, 'DELETE', `/leads/${gone}`, { auth: mcp.s.auth });
    const trash = (await callOk(mcp.client, 'search_leads', { deleted: 'true' })).leads.map((l: { id: string }) => l.id);
    expect(trash).toEqual([gone]);
    expect((await callOk(mcp.client, 'search_leads', { deleted: 'false' })).leads.map((l: { id: string }) => l.id)).not.toContain(gone);
    expect((await callOk(mcp.client, 'search_tasks', { overdue: 'false' })).tasks).toEqual(expect.any(Array));
    expect((await callOk(mcp.client, 'list_users', { active: 'true' })).users.map((u: { id: string }) => u.id)).toContain(mcp.s.userId);
    expect((await callOk(mcp.client, 'list_users', { active: 'false' })).users).toEqual([]);
  });

  it('refuses any other value with a tool error naming the argument', async () => {
    const { errors, text } = await callError(mcp.client, 'search_leads', { deleted: 'yes', externalId: 12.5 }, 'VALIDATION_FAILED');
    expect(errors).toEqual([
      { field: 'externalId', code: 'invalid_type', message: expect.stringContaining('must be a string, or a whole number of at most 9007199254740991') },
      { field: 'deleted', code: 'invalid_type', message: 'must be true or false (or their text, "true" or "false")' },
    ]);
    expect(text).toContain('- deleted (invalid_type)');
    for (const externalId of [2 ** 60, true, { id: 1 }]) {
      expect((await callError(mcp.client, 'search_accounts', { externalId }, 'VALIDATION_FAILED')).errors.map((e: { field: string }) => e.field)).toEqual(['externalId']);
    }
    for (const active of [1, 'TRUE', 'yes', '']) {
      expect((await callError(mcp.client, 'list_users', { active }, 'VALIDATION_FAILED')).errors).toEqual([{ field: 'active', code: 'invalid_type', message: expect.stringContaining('true or false') }]);
    }
    // A write's arguments are its REST body or path: not read as query text.
    const lead = (await call(mcp.t.app, 'POST', '/leads', { auth: mcp.s.auth, body: { name: 'Kept' } })).body.data.lead.id;
    expect((await callError(mcp.client, 'delete_lead', { id: lead, permanent: 'true' }, 'VALIDATION_FAILED')).errors.map((e: { field: string }) => e.field)).toEqual(['permanent']);
    expect((await callError(mcp.client, 'create_lead', { name: 'ERP', externalId: 5 }, 'VALIDATION_FAILED')).errors.map((e: { field: string }) => e.field)).toEqual(['externalId']);
  });
});
