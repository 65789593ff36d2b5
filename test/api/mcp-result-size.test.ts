import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RESULT_CHARS } from '../../src/modules/mcp/mcp.result-size.js';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { callOk, openMcp, type McpSetup } from '../helpers/mcp.js';
import { call } from '../helpers/http.js';

/** List tools keep their JSON under MAX_RESULT_CHARS, through the SDK's client over Streamable HTTP. */
describe('MCP list results bounded in size', () => {
  let mcp: McpSetup | undefined;
  let t: TestApp;
  let s: Seeded;
  let client: Client;
  /** The 100 long leads in the list's order (newest first), as REST pages them in one page. */
  let restIds: string[];

  const ids = (leads: { id: string }[]) => leads.map((l) => l.id);
  const restPage = async (query: string) => ids((await call(t.app, 'GET', `/leads?q=Long&${query}`, { auth: s.auth })).body.data.leads);

  beforeAll(async () => {
    mcp = await openMcp();
    ({ t, s, client } = mcp);
    expect((await call(t.app, 'PATCH', '/objects/leads', { auth: s.auth, body: { fields: [{ key: 'summary', label: 'Summary', type: 'long_text' }] } })).status).toBe(200);
    const items = Array.from({ length: 100 }, (_, i) => ({ name: `Long ${String(i).padStart(3, '0')}`, summary: `${i} `.padEnd(3000, 'x') }));
    expect((await call(t.app, 'POST', '/leads/batch', { auth: s.auth, body: { items } })).status).toBe(200);
    restIds = await restPage('limit=100');
    expect(restIds).toHaveLength(100);
  });
  afterAll(() => mcp?.close());

  it('cuts a page of 100 long leads to what fits, saying so, and its cursor walks every lead once', async () => {
    const first = await callOk(client, 'search_leads', { q: 'Long', limit: 100 });
    const n = first.leads.length;
    expect(JSON.stringify(first).length).toBeLessThanOrEqual(MAX_RESULT_CHARS);
    expect(n).toBeGreaterThan(1);
    expect(n).toBeLessThan(100);
    expect(first.truncated).toEqual({ returned: n, of: 100, maxChars: MAX_RESULT_CHARS, message: expect.stringContaining('pagination.nextCursor') });
    // The page returned is the list's own page of that size: page 1, its total, its cursor.
    expect(first.pagination).toEqual({ page: 1, limit: n, total: 100, totalPages: Math.ceil(100 / n), hasMore: true, nextCursor: expect.any(String) });
    expect(ids(first.leads)).toEqual(restIds.slice(0, n));
    expect(first.leads[0].summary).toHaveLength(3000);

    const walked = ids(first.leads);
    for (let after = first.pagination.nextCursor; after; ) {
      const page = await callOk(client, 'search_leads', { q: 'Long', limit: 100, after });
      expect(JSON.stringify(page).length).toBeLessThanOrEqual(MAX_RESULT_CHARS);
      walked.push(...ids(page.leads));
      after = page.pagination.nextCursor;
    }
    expect(walked).toEqual(restIds);
  });

  it('cuts a later page to one starting at the same lead, numbered for its own size', async () => {
    const cut = await callOk(client, 'search_leads', { q: 'Long', page: 2, limit: 40 });
    const { page, limit } = cut.pagination;
    expect(cut.leads.length).toBeLessThan(40);
    expect((page - 1) * limit).toBe(40);
    expect(ids(cut.leads)).toEqual(restIds.slice(40, 40 + cut.leads.length));
    expect(ids(cut.leads)).toEqual(await restPage(`page=${page}&limit=${limit}`));
    expect(cut.truncated).toMatchObject({ returned: cut.leads.length, of: 40 });
  });

  it('says so in the descriptions of the tools that list', async () => {
    const { tools } = await client.listTools();
    const listing = tools.filter((tool) => tool.description!.includes(`${MAX_RESULT_CHARS} characters`)).map((tool) => tool.name);
    expect(listing.sort()).toEqual(['get_timeline', 'list_notes', 'list_objects', 'list_users', 'search_accounts', 'search_deals', 'search_leads', 'search_records', 'search_tasks']);
  });

  it('leaves a page that fits as it is', async () => {
    const small = await callOk(client, 'search_leads', { q: 'Long', limit: 5 });
    expect(ids(small.leads)).toEqual(restIds.slice(0, 5));
    expect(small).not.toHaveProperty('truncated');
    expect(small.pagination).toMatchObject({ page: 1, limit: 5, total: 100 });
  });

  it('bounds a cursor-only list too: a timeline of long notes', async () => {
    const lead = restIds[0]!;
    for (let i = 0; i < 30; i += 1) {
      expect((await call(t.app, 'POST', '/notes', { auth: s.auth, body: { target: { object: 'lead', id: lead }, body: `Note ${i} `.padEnd(4000, '.') } })).status).toBe(201);
    }
    const first = await callOk(client, 'get_timeline', { object: 'lead', id: lead, limit: 50 });
    expect(JSON.stringify(first).length).toBeLessThanOrEqual(MAX_RESULT_CHARS);
    expect(first.truncated).toMatchObject({ returned: first.timeline.length, of: 31 });
    expect(first.pagination).toEqual({ limit: first.timeline.length, nextCursor: expect.any(String) });
    const entries = [...first.timeline];
    for (let after = first.pagination.nextCursor; after; ) {
      const page = await callOk(client, 'get_timeline', { object: 'lead', id: lead, limit: 50, after });
      entries.push(...page.timeline);
      after = page.pagination.nextCursor;
    }
    expect(entries.filter((e: { type: string }) => e.type === 'note')).toHaveLength(30);
    expect(entries).toHaveLength(31);
  });

  it('never cuts an item: one larger than the bound comes alone and whole', async () => {
    const huge = 'y'.repeat(MAX_RESULT_CHARS + 1000);
    for (const name of ['Huge one', 'Huge two']) {
      expect((await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name, summary: huge } })).status).toBe(201);
    }
    const page = await callOk(client, 'search_leads', { q: 'Huge', limit: 2 });
    expect(page.leads).toHaveLength(1);
    expect(page.leads[0]).toMatchObject({ name: 'Huge two', summary: huge });
    expect(page.truncated).toMatchObject({ returned: 1, of: 2 });
    expect(page.pagination).toMatchObject({ page: 1, limit: 1, total: 2, nextCursor: expect.any(String) });
    const { lead } = await callOk(client, 'get_lead', { id: page.leads[0].id });
    expect(lead.summary).toBe(huge);
  });
});
