import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { get, openConsole, type ConsoleSession } from '../helpers/admin.js';

/*
 * Console tables name the items their relation fields point at. The items a page's rows point at are read
 * together, one read per target, however many rows the page shows (docs/console.md, "Speed"): a full page of
 * 25 rows with two relations each (50 lookups) issues as many statements as a page of one row.
 */

let t: TestApp;
let a: Seeded;
let s: ConsoleSession;

/** A page of the console table holds 25 rows (DEFAULT_LIMIT); one more item makes a page 2 of one row. */
const ROWS = 26;

const api = async (method: 'POST' | 'PATCH', path: string, body: unknown) => {
  const res = await call(t.app, method, path, { auth: a.auth, body });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body.data;
};

const relations = [
  { key: 'project', label: 'Project', type: 'relation', target: 'projects' },
  { key: 'partner', label: 'Partner', type: 'relation', target: 'partners' },
];

beforeAll(async () => {
  ({ t, a, s } = await openConsole({ admin: true, name: 'Nora Statements' }));
  await api('POST', '/objects', { slug: 'projects', name: 'Projects', fields: [{ key: 'title', label: 'Title', type: 'text' }] });
  await api('POST', '/objects', { slug: 'partners', name: 'Partners', fields: [{ key: 'title', label: 'Title', type: 'text' }] });
  await api('POST', '/objects', { slug: 'visits', name: 'Visits', fields: [{ key: 'title', label: 'Title', type: 'text' }, ...relations] });
  for (const resource of ['leads', 'accounts', 'deals']) await api('PATCH', `/objects/${resource}`, { fields: relations });
  const batch = async (path: string, items: object[], key: string): Promise<string[]> =>
    (await api('POST', `${path}/batch`, { items })).results.map((r: Record<string, { id: string }>) => r[key]!.id);
  const numbered = (prefix: string) => Array.from({ length: ROWS }, (_, i) => `${prefix} ${i}`);
  const projects = await batch('/objects/projects/records', numbered('Project').map((title) => ({ title })), 'record');
  const partners = await batch('/objects/partners/records', numbered('Partner').map((title) => ({ title })), 'record');
  const links = (i: number) => ({ project: projects[i], partner: partners[i] });
  await batch('/objects/visits/records', numbered('Visit').map((title, i) => ({ title, ...links(i) })), 'record');
  for (const [path, key] of [['/leads', 'lead'], ['/accounts', 'account'], ['/deals', 'deal']] as const) {
    await batch(path, numbered(key).map((name, i) => ({ name, ...links(i) })), key);
  }
});
afterAll(() => t?.close());

/** The statements the app issues to render `url` (after a first render has filled the caches), with the page. */
async function statementsFor(url: string): Promise<{ count: number; body: string }> {
  expect((await get(t.app, url, s.cookie)).status).toBe(200);
  const executeQuery = vi.spyOn(t.ctx.database.db.getExecutor(), 'executeQuery');
  try {
    const page = await get(t.app, url, s.cookie);
    expect(page.status).toBe(200);
    return { count: executeQuery.mock.calls.length, body: page.body };
  } finally {
    executeQuery.mockRestore();
  }
}

/*
 * Pinned: what each page issues, each of its two relation targets read in 3 statements (its object, for the
 * titles and again for the lookup, then the records). Before the lookups were batched, a full page issued 107 or
 * 108: two statements per row and relation.
 */
describe('tables with relations to records', () => {
  it.each([
    ['records', '/admin/data/objects/visits', 12],
    ['leads', '/admin/data/leads', 11],
    ['accounts', '/admin/data/accounts', 11],
    ['deals', '/admin/data/deals', 12],
  ])('%s: a full page reads its related records in as many statements as a page of one row', async (_name, path, statements) => {
    const full = await statementsFor(path);
    const single = await statementsFor(`${path}?page=2`);
    expect(full.body).toContain('>Project 25</a>');
    expect(full.body).toContain('>Partner 1</a>');
    expect(single.body).toContain('>Project 0</a>');
    expect({ full: full.count, single: single.count }).toEqual({ full: statements, single: statements });
  });
});
