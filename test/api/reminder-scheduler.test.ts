import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { ManualClock } from '../../src/lib/clock.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { runDueReminders, startReminderScheduler } from '../../src/modules/objects/reminders.service.js';
import { dueReminders, markFired } from '../../src/modules/objects/reminders.store.js';
import { startServer } from '../../src/server.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

let t: TestApp;
const clock = new ManualClock('2026-04-01T00:00:00.000Z');

beforeAll(async () => {
  t = await buildTestApp({ clock });
});
afterAll(() => t.close());

async function orgWithTasks(count: number, dueOn: string): Promise<{ who: Seeded; ids: string[] }> {
  const who = await seedOrg(t.ctx, { rateLimitPerMinute: 10_000 });
  await call(t.app, 'POST', '/objects', { auth: who.auth, body: { slug: 'tasks', name: 'Tasks', fields: [{ key: 'due_on', label: 'Due', type: 'date', role: 'due' }] } });
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const res = await call(t.app, 'POST', '/objects/tasks/records', { auth: who.auth, body: { due_on: dueOn } });
    expect(res.status).toBe(201);
    ids.push(res.body.data.record.id);
  }
  return { who, ids };
}
const firedIds = async (who: Seeded) => (await listEvents(t.ctx.database.db, who.orgId)).filter((e) => e.type === 'record.due').map((e) => e.data.id);

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() - start > timeoutMs) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('exactly once', () => {
  it('fires once across a restart: another instance on the same database finds nothing left to fire', async () => {
    clock.set('2026-04-01T00:00:00.000Z');
    const { who, ids } = await orgWithTasks(3, '2026-04-02');
    clock.set('2026-04-02T09:00:00.000Z');
    expect(await runDueReminders(t.ctx)).toBe(3);
    const restarted = await buildTestApp({ clock, sameDatabaseAs: t });
    try {
      expect(await runDueReminders(restarted.ctx)).toBe(0);
    } finally {
      await restarted.close();
    }
    expect((await firedIds(who)).sort()).toEqual([...ids].sort());
  });

  it('keeps a planned reminder across a restart until its time comes', async () => {
    clock.set('2026-04-03T00:00:00.000Z');
    const { who, ids } = await orgWithTasks(1, '2026-04-04');
    const restarted = await buildTestApp({ clock, sameDatabaseAs: t });
    try {
      clock.set('2026-04-04T09:00:00.000Z');
      expect(await runDueReminders(restarted.ctx)).toBe(1);
    } finally {
      await restarted.close();
    }
    expect(await firedIds(who)).toEqual(ids);
  });

  it('claims a planned reminder with a compare-and-set that only one caller wins', async () => {
    clock.set('2026-04-04T00:00:00.000Z');
    await orgWithTasks(1, '2026-04-05');
    const [reminder] = await dueReminders(t.ctx.database.db, t.ctx.database.dialect, '2026-04-05T09:00:00.000Z', 100);
    expect(reminder).toMatchObject({ dueDate: '2026-04-05', fireAt: '2026-04-05T09:00:00.000Z', firedAt: null });
    expect(await markFired(t.ctx.database.db, reminder!, '2026-04-05T09:00:00.000Z')).toBe(true);
    expect(await markFired(t.ctx.database.db, reminder!, '2026-04-05T09:00:01.000Z')).toBe(false);
    expect(await dueReminders(t.ctx.database.db, t.ctx.database.dialect, '2026-04-05T10:00:00.000Z', 100)).toEqual([]);
  });

  it('fires each reminder once when several scheduler processes tick together on one database', async () => {
    clock.set('2026-04-05T00:00:00.000Z');
    const { who, ids } = await orgWithTasks(120, '2026-04-06');
    const instances = [0, 1].map(() => spawnScheduler('2026-04-06T09:00:00.000Z'));
    await Promise.all(instances.map((i) => i.ready));
    for (const i of instances) i.go();
    const counts = await Promise.all(instances.map((i) => i.fired));
    expect(counts.reduce((sum, n) => sum + n, 0)).toBe(120);
    const fired = await firedIds(who);
    expect(fired).toHaveLength(120);
    expect(new Set(fired)).toEqual(new Set(ids));
  }, 120_000);
});

/** A scheduler in another process on the test database (in-process SQLite connections would block each other). */
function spawnScheduler(now: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/reminders-worker.ts'], {
    env: { ...process.env, DATABASE_URL: t.config.database.url, ENCRYPTION_KEY: t.config.encryptionKeys[0], NOW: now, DB_SCHEMA: dialect === 'postgres' ? t.location : '' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output);
        if (match) resolve(match);
      };
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        check();
      });
      child.on('exit', (code) => reject(new Error(`scheduler exited with ${code}: ${output}`)));
    });
  return {
    ready: waitFor(/ready/),
    fired: waitFor(/fired (\d+)/).then((m) => Number(m[1])),
    go: () => child.stdin.write('go\n'),
  };
}

describe('startReminderScheduler', () => {
  it('ticks at once and every interval until stopped, and stop() waits for the tick in progress', async () => {
    clock.set('2026-04-07T00:00:00.000Z');
    const { who, ids } = await orgWithTasks(1, '2026-04-07');
    const scheduler = startReminderScheduler(t.ctx, { intervalMs: 10 });
    expect(await eventually(() => firedIds(who), (f) => f.length === 0 ? false : true, 200)).toEqual([]);
    clock.set('2026-04-07T09:00:00.000Z');
    expect(await eventually(() => firedIds(who), (f) => f.length > 0)).toEqual(ids);
    await scheduler.stop();
    const late = await orgWithTasks(1, '2026-04-07');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await firedIds(late.who)).toEqual([]);
  });

  it('reports a failed tick and keeps going', async () => {
    const errors: unknown[] = [];
    const broken = { ...t.ctx, clock: { now: () => { throw new Error('clock broke'); } } };
    const scheduler = startReminderScheduler(broken, { intervalMs: 5, onError: (err) => errors.push(err) });
    await eventually(async () => errors.length, (n) => n >= 2);
    await scheduler.stop();
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(String(errors[0])).toContain('clock broke');
  });
});

describe('crm serve', () => {
  const serve = async (env: Record<string, string>) => {
    const config = loadConfig({ ...Object.fromEntries(Object.entries({ DATABASE_URL: t.config.database.url, ENCRYPTION_KEY: t.config.encryptionKeys[0] })), PORT: '0', LOG_LEVEL: 'silent', ...env }, () => undefined);
    const database = openDatabase({ ...config.database, ...(dialect === 'postgres' ? { schema: t.location, poolSize: 2 } : {}) });
    return startServer(config, { database, clock });
  };

  it('runs the reminder scheduler in-process with DISPATCHER=inline and stops it on close', async () => {
    clock.set('2026-04-08T00:00:00.000Z');
    const { who, ids } = await orgWithTasks(1, '2026-04-08');
    clock.set('2026-04-08T09:00:00.000Z');
    const server = await serve({ DISPATCHER: 'inline' });
    try {
      expect(await eventually(() => firedIds(who), (f) => f.length > 0)).toEqual(ids);
    } finally {
      await server.close();
    }
  });

  it('leaves reminders alone with DISPATCHER=off', async () => {
    clock.set('2026-04-09T00:00:00.000Z');
    const { who } = await orgWithTasks(1, '2026-04-09');
    clock.set('2026-04-09T09:00:00.000Z');
    const server = await serve({ DISPATCHER: 'off' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await firedIds(who)).toEqual([]);
    } finally {
      await server.close();
    }
    expect(await runDueReminders(t.ctx)).toBe(1);
  });
});
