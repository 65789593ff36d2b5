import { describe, expect, it } from 'vitest';
import { isId, newId } from '../../src/lib/ids.js';

/** Everything after the time: 54 random bits (the last 52 as 13 hex digits, enough to compare). */
const randomTail = (id: string) => BigInt(`0x${id.slice(11)}`);

describe('ids', () => {
  it('are 24 lowercase hex, begin with the seconds since the epoch, and sort by creation time', () => {
    const at = new Date('2026-11-24T10:00:00.250Z');
    const id = newId(at);
    expect(isId(id)).toBe(true);
    expect(parseInt(id.slice(0, 8), 16)).toBe(Math.floor(at.getTime() / 1000));
    const later = [1, 999, 1000, 86_400_000].map((ms) => newId(new Date(at.getTime() + ms)));
    for (const next of later) expect(next > id).toBe(true);
    expect([...later].sort()).toEqual(later);
  });

  it('reveal no counter: ids drawn one after another in the same millisecond differ unpredictably after the time', () => {
    const at = new Date('2026-11-24T10:00:00.250Z');
    const ids = Array.from({ length: 1000 }, () => newId(at));
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(0, 10))).size).toBe(1);
    const tails = ids.map(randomTail);
    // A counter steps by a small amount; random tails are about 2^51 apart, never under 2^32 in practice (odds 2^-20 per pair).
    const steps = tails.slice(1).map((t, i) => (t > tails[i]! ? t - tails[i]! : tails[i]! - t));
    expect(steps.filter((d) => d < 2n ** 32n)).toEqual([]);
    // Neither increasing nor decreasing: about half the steps go down.
    const down = tails.slice(1).filter((t, i) => t < tails[i]!).length;
    expect(down).toBeGreaterThan(400);
    expect(down).toBeLessThan(600);
  });
});
