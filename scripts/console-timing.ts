/**
 * Server time of every console page with 100,000 leads, accounts, deals and records of a custom object in
 * one organization, read from the Server-Timing header the console sends. `npx tsx scripts/console-timing.ts` (SQLite in a temp folder), or with
 * DATABASE_URL=postgres://… pointing at an empty database. Prints the median and the worst of 5 runs.
 */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { seedCrmDemo, seedCrmVolume } from './demo-crm.js';
import { startDemoApp, seedDemo } from './demo-data.js';

const LEADS = Number(process.env.LEADS ?? 100_000);
const RUNS = 5;

function cookieOf(setCookie: unknown, name: string): string {
  const all = ([] as string[]).concat((setCookie as string | string[] | undefined) ?? []);
  return all.find((c) => c.startsWith(`${name}=`))!.split(';')[0]!;
}

async function signIn(app: FastifyInstance, email: string, password: string): Promise<string> {
  const form = await app.inject({ method: 'GET', url: '/admin/sign-in' });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
  const res = await app.inject({
    method: 'POST',
    url: '/admin/sign-in',
    headers: { cookie: cookieOf(form.headers['set-cookie'], 'crm_form'), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: csrf, email, password }).toString(),
  });
  return cookieOf(res.headers['set-cookie'], 'crm_session');
}

const started = performance.now();
const demo = await startDemoApp(process.env.DATABASE_URL ? { databaseUrl: process.env.DATABASE_URL } : {});
try {
  const seeded = await seedDemo(demo.ctx, { leads: LEADS, withEvents: 50 });
  await seedCrmDemo(demo.ctx, seeded);
  await seedCrmVolume(demo.ctx, seeded, LEADS);
  // A running PostgreSQL has autovacuum keep statistics and the visibility map current; a bulk load hasn't yet.
  if (demo.ctx.database.dialect === 'postgres') await sql`vacuum analyze`.execute(demo.ctx.database.db);
  console.log(`seeded ${LEADS.toLocaleString('en-US')} leads, accounts, deals and records on ${demo.ctx.database.dialect} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const cookie = await signIn(demo.app, seeded.admin.email, seeded.admin.password);
  const list = await demo.app.inject({ method: 'GET', url: '/admin/data/leads', headers: { cookie } });
  const leadId = /\/admin\/data\/leads\/([0-9a-f]{24})"/.exec(list.body)![1]!;
  const old = await demo.app.inject({ method: 'GET', url: `/admin/data/leads?page=${Math.ceil(LEADS / 25)}`, headers: { cookie } });
  const oldLeadId = /\/admin\/data\/leads\/([0-9a-f]{24})"/.exec(old.body)![1]!;
  const lastPage = Math.ceil(LEADS / 25);
  const firstId = async (url: string, path: string) => new RegExp(`${path}/([0-9a-f]{24})"`).exec((await demo.app.inject({ method: 'GET', url, headers: { cookie } })).body)![1]!;
  const accountId = await firstId('/admin/data/accounts', '/admin/data/accounts');
  const dealId = await firstId('/admin/data/deals', '/admin/data/deals');
  const recordId = await firstId('/admin/data/objects/projects', '/admin/data/objects/projects');
  const pages = [
    '/admin', '/admin/data/leads', '/admin/data/leads?page=2', `/admin/data/leads?page=${lastPage}`,
    '/admin/data/leads?q=lovelace', '/admin/data/leads?q=ad', '/admin/data/leads?q=ada.hopper.20%40example.com', '/admin/data/leads?q=%2B14155551234',
    `/admin/data/leads/${leadId}`, `/admin/data/leads/${oldLeadId}`, `/admin/data/leads/${leadId}/edit`, '/admin/data/leads/new',
    '/admin/config/api-keys', '/admin/config/assignment-rules', '/admin/config/settings', '/admin/config/users', '/admin/account/sessions',
    '/admin/data/accounts', `/admin/data/accounts?page=${lastPage}`, '/admin/data/accounts?q=contoso', '/admin/data/accounts?q=contact77%40example.com', `/admin/data/accounts/${accountId}`, `/admin/data/accounts/${accountId}/edit`,
    '/admin/data/deals', `/admin/data/deals?page=${lastPage}`, '/admin/data/deals?stage=won', '/admin/data/deals?q=renewal', `/admin/data/deals?ownerId=${seeded.reps[0]}&stage=proposal`,
    '/admin/data/deals/board', '/admin/data/deals/board?q=pilot', `/admin/data/deals/${dealId}`, `/admin/data/deals/${dealId}/edit`, '/admin/data/deals/new',
    '/admin/data/objects/projects', `/admin/data/objects/projects?page=${lastPage}`, '/admin/data/objects/projects?q=relaunch', '/admin/data/objects/projects?stage=done&overdue=true',
    `/admin/data/objects/projects/${recordId}`, `/admin/data/objects/projects/${recordId}/edit`, '/admin/data/objects/projects/new',
    '/admin/config/deal-stages', '/admin/config/objects', '/admin/config/objects/projects/definition', '/admin/config/webhooks', '/admin/config', '/admin/data',
  ];
  console.log('page'.padEnd(60), 'median ms', 'max ms');
  for (const url of pages) {
    const times: number[] = [];
    for (let i = 0; i <= RUNS; i++) {
      const res = await demo.app.inject({ method: 'GET', url, headers: { cookie } });
      if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}`);
      if (i > 0) times.push(Number(/dur=([\d.]+)/.exec(String(res.headers['server-timing']))![1]));
    }
    times.sort((a, b) => a - b);
    console.log(url.padEnd(60), times[Math.floor(RUNS / 2)]!.toFixed(1).padStart(9), times[RUNS - 1]!.toFixed(1).padStart(6));
  }
} finally {
  await demo.close();
}
