import { randomFillSync } from 'node:crypto';
import type { RandomSource } from '../src/inject/index.js';

/**
 * Cryptographically random bytes for drain-ids, drawn from a pool refilled 4 KiB at a time
 * (one randomFillSync per 256 ids instead of one per admission).
 */
export function pooledRandom(poolBytes = 4096): RandomSource {
  const pool = Buffer.alloc(poolBytes);
  let offset = poolBytes;
  return (count) => {
    if (count > poolBytes) return randomFillSync(Buffer.alloc(count));
    if (offset + count > poolBytes) {
      randomFillSync(pool);
      offset = 0;
    }
    // A copy: the pool is overwritten on the next refill.
    const out = Uint8Array.prototype.slice.call(pool, offset, offset + count);
    offset += count;
    return out;
  };
}
