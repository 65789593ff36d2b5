import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WriteLock } from '../../src/db/write-lock.js';
import { ConnectionBalance } from '../../src/http/connection-balance.js';
import { MemoryRateLimiter, SharedMemoryRateLimiter } from '../../src/http/rate-limit.js';
import { ManualClock } from '../../src/lib/clock.js';

const rateLimitModule = fileURLToPath(new URL('../../src/http/rate-limit.ts', import.meta.url));

/** Spends `hits` requests of `key` from a worker thread on the shared table; resolves with how many were allowed. */
function hitFromThread(buffer: SharedArrayBuffer, key: string, hits: number, limit: number): Promise<number> {
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(rateLimitModule)}); }).then(async ({ SharedMemoryRateLimiter }) => {
      const limiter = new SharedMemoryRateLimiter(workerData.buffer, { now: () => new Date() });
      let allowed = 0;
      for (let i = 0; i < workerData.hits; i++) if ((await limiter.hit(workerData.key, workerData.limit, 60000)).allowed) allowed++;
      parentPort.postMessage(allowed);
    });`;
  const worker = new Worker(code, { eval: true, workerData: { buffer, key, hits, limit } });
  return new Promise((resolve, reject) => {
    worker.once('message', (n: number) => {
      resolve(n);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

describe('shared-memory rate limiter', () => {
  it('answers exactly as the in-memory limiter for any sequence of hits and clock moves', async () => {
    const step = fc.record({ key: fc.constantFrom('k1', 'k2', 'k3'), advanceMs: fc.integer({ min: 0, max: 40_000 }), limit: fc.constantFrom(1, 3, 5), cost: fc.constantFrom(1, 1, 2, 4) });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        const clock = new ManualClock('2026-11-24T10:00:00.000Z');
        const shared = new SharedMemoryRateLimiter(SharedMemoryRateLimiter.createBuffer(64), clock);
        const memory = new MemoryRateLimiter(clock);
        try {
          for (const s of steps) {
            clock.advance(s.advanceMs);
            expect(await shared.hit(s.key, s.limit, 60_000, s.cost)).toEqual(await memory.hit(s.key, s.limit, 60_000, s.cost));
          }
        } finally {
          await memory.close();
        }
      }),
    );
  });

  it('admits a hit of several units whole or not at all, and a refused hit spends nothing', async () => {
    const clock = new ManualClock('2026-11-24T10:00:00.000Z');
    for (const limiter of [new SharedMemoryRateLimiter(SharedMemoryRateLimiter.createBuffer(64), clock), new MemoryRateLimiter(clock)]) {
      expect(await limiter.hit('batch', 10, 60_000, 7)).toMatchObject({ allowed: true, remaining: 3 });
      expect(await limiter.hit('batch', 10, 60_000, 4)).toMatchObject({ allowed: false, remaining: 3 });
      expect(await limiter.hit('batch', 10, 60_000, 3)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await limiter.hit('batch', 10, 60_000)).toMatchObject({ allowed: false, remaining: 0 });
      await limiter.close();
    }
  });

  it('admits exactly the limit when threads spend the same key at once', async () => {
    const buffer = SharedMemoryRateLimiter.createBuffer();
    const allowed = await Promise.all([hitFromThread(buffer, 'key-1', 100_000, 150_000), hitFromThread(buffer, 'key-1', 100_000, 150_000)]);
    expect(allowed[0]! + allowed[1]!).toBe(150_000);
  });

  it('keeps working when more keys call than the table has slots (a key takes over the slot closest to its reset)', async () => {
    const clock = new ManualClock('2026-11-24T10:00:00.000Z');
    const limiter = new SharedMemoryRateLimiter(SharedMemoryRateLimiter.createBuffer(4), clock);
    for (let i = 0; i < 10; i++) expect((await limiter.hit(`key-${i}`, 2, 60_000)).allowed).toBe(true);
    expect(await limiter.hit('key-9', 2, 60_000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await limiter.hit('key-9', 2, 60_000)).toMatchObject({ allowed: false });
  });
});

describe('write lock', () => {
  it('lets one holder in at a time, and a waiter waits without blocking its event loop', async () => {
    const lock = new WriteLock();
    await lock.acquire();
    let second = false;
    const waiting = lock.acquire().then(() => (second = true));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(second).toBe(false);
    lock.release();
    await waiting;
    expect(second).toBe(true);
    lock.release();
  });

  it('is the same lock for every WriteLock over one buffer', async () => {
    const a = new WriteLock();
    const b = new WriteLock(a.buffer);
    await a.acquire();
    let got = false;
    const waiting = b.acquire().then(() => (got = true));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(got).toBe(false);
    a.release();
    await waiting;
    b.release();
  });
});

describe('connection balance', () => {
  it('ends a connection of a thread holding more than an even share plus one, at most once per 20 ms', () => {
    const buffer = ConnectionBalance.createBuffer(2);
    const counts = new Int32Array(buffer);
    const busy = new ConnectionBalance(buffer, 0);
    const quiet = new ConnectionBalance(buffer, 1);
    counts[0] = 18;
    counts[1] = 14;
    expect(quiet.shouldShed(1_000)).toBe(false);
    expect(busy.shouldShed(1_000)).toBe(true);
    expect(busy.shouldShed(1_010)).toBe(false);
    expect(busy.shouldShed(1_021)).toBe(true);
    counts[0] = 17;
    counts[1] = 15;
    expect(busy.shouldShed(2_000)).toBe(false);
  });
});
