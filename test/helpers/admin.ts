import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import type { AppContext } from '../../src/context.js';
import { createUser } from '../../src/modules/orgs/orgs.service.js';
import { setUserPassword } from '../../src/modules/orgs/users.store.js';
import { cheapPasswordHash } from './password-hash.js';
import { buildTestApp, type TestApp, type TestAppOptions } from './test-app.js';
import { seedOrg, type Seeded } from './seed.js';

/** A signed-in console browser, reduced to what a test needs: its cookie and the page's CSRF token. */
export interface ConsoleSession {
  cookie: string;
  csrf: string;
  userId: string;
}

export interface PageResponse {
  status: number;
  body: string;
  headers: Record<string, string | string[] | number | undefined>;
  location: string | undefined;
}

let counter = 0;
export const PASSWORD = 'correct horse battery staple';
/** PASSWORD's hash, made once (at a low cost: see cheapPasswordHash). */
const PASSWORD_HASH = cheapPasswordHash(PASSWORD);

/** A user of the organization who can sign in to the console with PASSWORD. */
export async function addConsoleUser(ctx: AppContext, orgId: string, opts: { admin?: boolean; name?: string } = {}) {
  counter += 1;
  const email = `console${counter}.${orgId}@example.com`;
  const { id } = await createUser(ctx, { organizationId: orgId, email, name: opts.name ?? `Console user ${counter}`, admin: opts.admin ?? false });
  await setUserPassword(ctx.database.db, orgId, id, PASSWORD_HASH, ctx.clock.now().toISOString());
  return { id, email, password: PASSWORD };
}

/**
 * The set-up of a console test file: an app, an organization with an API key, and one console user signed in.
 * The app is closed again if the rest fails, so that a file's `afterAll(() => t?.close())` has nothing left to do.
 */
export async function openConsole(user: { name: string; admin?: boolean }, opts: { app?: TestAppOptions; timezone?: string } = {}): Promise<{ t: TestApp; a: Seeded; s: ConsoleSession }> {
  const t = await buildTestApp(opts.app);
  try {
    const a = await seedOrg(t.ctx, opts.timezone ? { timezone: opts.timezone } : {});
    const s = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, user));
    return { t, a, s };
  } catch (err) {
    await t.close();
    throw err;
  }
}

export function csrfOf(body: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(body);
  if (!m) throw new Error('no CSRF field on the page');
  return m[1]!;
}

function cookieValue(setCookie: unknown, name: string): string | undefined {
  const all = Array.isArray(setCookie) ? setCookie : setCookie ? [String(setCookie)] : [];
  const found = all.find((c: string) => c.startsWith(`${name}=`));
  return found?.split(';')[0];
}

function toResponse(res: { statusCode: number; body: string; headers: PageResponse['headers'] }): PageResponse {
  return { status: res.statusCode, body: res.body, headers: res.headers, location: res.headers.location as string | undefined };
}

export async function get(app: FastifyInstance, url: string, cookie?: string): Promise<PageResponse> {
  return toResponse(await app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} }));
}

/** Posts a urlencoded form; the CSRF token is the session's unless `csrf` overrides it (null: left out). */
export async function post(app: FastifyInstance, url: string, fields: Record<string, string | string[]>, opts: { cookie?: string; csrf?: string | null; headers?: Record<string, string> } = {}): Promise<PageResponse> {
  const params = new URLSearchParams();
  if (opts.csrf !== null && opts.csrf !== undefined) params.append('_csrf', opts.csrf);
  for (const [k, v] of Object.entries(fields)) for (const item of Array.isArray(v) ? v : [v]) params.append(k, item);
  return toResponse(
    await app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(opts.cookie ? { cookie: opts.cookie } : {}), ...opts.headers },
      payload: params.toString(),
    }),
  );
}

/** Submits the sign-in form like a browser: fetch the form (cookie + token), then post it. */
export async function attemptSignIn(app: FastifyInstance, email: string, password: string, headers: Record<string, string> = {}): Promise<PageResponse & { sessionCookie?: string }> {
  const form = await app.inject({ method: 'GET', url: '/admin/sign-in', headers });
  const formCookie = cookieValue(form.headers['set-cookie'], 'crm_form')!;
  const res = await post(app, '/admin/sign-in', { email, password, next: '/admin' }, { cookie: formCookie, csrf: csrfOf(form.body), headers });
  return { ...res, sessionCookie: cookieValue(res.headers['set-cookie'], 'crm_session') };
}

export async function signIn(app: FastifyInstance, user: { id: string; email: string; password: string }): Promise<ConsoleSession> {
  const res = await attemptSignIn(app, user.email, user.password);
  expect(res.status, res.body).toBe(303);
  const cookie = res.sessionCookie!;
  const home = await get(app, '/admin', cookie);
  expect(home.status).toBe(200);
  return { cookie, csrf: csrfOf(home.body), userId: user.id };
}

/** A form post as the signed-in user, with their session's CSRF token. */
export function submit(app: FastifyInstance, s: ConsoleSession, url: string, fields: Record<string, string | string[]> = {}): Promise<PageResponse> {
  return post(app, url, fields, { cookie: s.cookie, csrf: s.csrf });
}

/** The message shown next to a form field (its `…-error` paragraph), or undefined. */
export function fieldError(body: string, field: string): string | undefined {
  const m = new RegExp(`<p class="field-error" id="f-${field}-error">(.*?)</p>`, 's').exec(body);
  return m?.[1]?.replace(/<[^>]+>/g, '').trim();
}

/** The values of a page's checked checkboxes named `name`, unescaped: what the browser sends back for them. */
export function checkedValues(body: string, name: string): string[] {
  const unescape = (v: string) => v.replace(/&quot;|&#39;|&#96;|&lt;|&gt;|&amp;/g, (e) => ({ '&quot;': '"', '&#39;': "'", '&#96;': '`', '&lt;': '<', '&gt;': '>', '&amp;': '&' })[e]!);
  return [...body.matchAll(new RegExp(`<input type="checkbox"[^>]* name="${name}" value="([^"]*)" checked>`, 'g'))].map((m) => unescape(m[1]!));
}
