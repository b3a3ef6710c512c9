/**
 * The injected randomness (DESIGN §2): the operating system's CSPRNG, drawn in 4 KiB blocks
 * (docs/performance.md §Ids, secrets and randomness).
 * Invariant: every byte handed out is fresh from the CSPRNG and zeroed in the pool once copied, so
 * no value is handed out twice. Tested by test/unit/random.test.ts.
 */
import { randomFillSync } from 'node:crypto';

/** Randomness is injected (DESIGN §2) so tests can pin it where determinism matters. */
export interface Random {
  bytes(length: number): Buffer;
}

/** Bytes drawn from the operating system's CSPRNG at a time. */
const POOL_SIZE = 4096;

/**
 * The CSPRNG, drawn in blocks: crypto.randomBytes costs about 3 µs per call whatever the size, and
 * the token endpoint draws three values per request (docs/performance.md §Ids, secrets and randomness). One randomFillSync
 * fills 4 KiB; each call copies its bytes out and zeroes them in the pool, so no value handed out
 * stays behind (as Node's own randomUUID keeps a cache of random bytes).
 */
export function pooledCryptoRandom(poolSize = POOL_SIZE): Random {
  const pool = Buffer.alloc(poolSize);
  let offset = poolSize;
  return {
    bytes(length) {
      if (length > poolSize) return randomFillSync(Buffer.alloc(length));
      if (offset + length > poolSize) {
        randomFillSync(pool);
        offset = 0;
      }
      const out = Buffer.allocUnsafe(length);
      pool.copy(out, 0, offset, offset + length);
      pool.fill(0, offset, offset + length);
      offset += length;
      return out;
    },
  };
}

export const cryptoRandom: Random = pooledCryptoRandom();
