import { randomBytes } from 'node:crypto';

/** Randomness is injected (DESIGN §2) so tests can pin it where determinism matters. */
export interface Random {
  bytes(length: number): Buffer;
}

export const cryptoRandom: Random = { bytes: (length) => randomBytes(length) };
