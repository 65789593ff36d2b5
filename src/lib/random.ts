import { randomFillSync } from 'node:crypto';

/**
 * Random bytes from a pooled CSPRNG buffer: one system call per 8 KiB instead of one per id or IV. The
 * bytes are the same cryptographic randomness; only the refill is batched (ids, IVs and tokens are small
 * and created by the thousand during imports).
 */
const POOL_SIZE = 8192;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let offset = POOL_SIZE;

export function randomBytesPooled(size: number): Buffer {
  if (size > POOL_SIZE) return randomFillSync(Buffer.allocUnsafe(size));
  if (offset + size > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const out = Buffer.from(pool.subarray(offset, offset + size));
  pool.fill(0, offset, offset + size);
  offset += size;
  return out;
}
