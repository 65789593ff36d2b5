import { describe, expect, it } from 'vitest';
import { FifoMap } from '../../src/lib/fifo-map.js';

describe('FifoMap', () => {
  it('keeps at most its capacity, evicting the oldest insertion first', () => {
    const map = new FifoMap<string, number>(3);
    for (const [i, key] of ['a', 'b', 'c', 'd', 'e'].entries()) map.set(key, i);
    expect(map.size).toBe(3);
    expect(['a', 'b', 'c', 'd', 'e'].map((k) => map.get(k))).toEqual([undefined, undefined, 2, 3, 4]);
  });

  it('evicts in insertion order through many rounds of the ring', () => {
    const map = new FifoMap<number, number>(7);
    for (let i = 0; i < 100; i++) map.set(i, i * 2);
    expect(map.size).toBe(7);
    for (let i = 0; i < 100; i++) expect(map.get(i)).toBe(i >= 93 ? i * 2 : undefined);
  });

  it('an existing key takes the new value and keeps its place', () => {
    const map = new FifoMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 10);
    expect(map.size).toBe(2);
    map.set('c', 3);
    expect([map.get('a'), map.get('b'), map.get('c')]).toEqual([undefined, 2, 3]);
  });

  it('clear empties it, and it fills again from the start', () => {
    const map = new FifoMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    map.clear();
    expect(map.size).toBe(0);
    map.set('d', 4);
    map.set('e', 5);
    map.set('f', 6);
    expect([map.get('d'), map.get('e'), map.get('f')]).toEqual([undefined, 5, 6]);
  });

  it('keeps nothing with a capacity of 0', () => {
    const map = new FifoMap<string, number>(0);
    map.set('a', 1);
    expect(map.size).toBe(0);
    expect(map.get('a')).toBeUndefined();
  });
});
