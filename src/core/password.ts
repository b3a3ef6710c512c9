import { scrypt, randomBytes, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Passwords are hashed with scrypt (node:crypto, no native dependency). The parameters travel
 * inside the stored string, so raising the cost later still verifies old hashes.
 * Format: scrypt$<log2 N>$<r>$<p>$<salt b64url>$<hash b64url>
 */
export interface PasswordCost {
  log2N: number;
  r: number;
  p: number;
}

/** 2^15 × r=8 ≈ 32 MiB and ~50–100 ms per hash on these machines; OWASP's scrypt floor is 2^17 with r=8 for 128 MiB, which we trade for predictable memory under concurrent sign-ins. */
export const DEFAULT_PASSWORD_COST: PasswordCost = { log2N: 15, r: 8, p: 1 };

const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, cost: PasswordCost): Promise<Buffer> {
  const N = 2 ** cost.log2N;
  const options: ScryptOptions = { N, r: cost.r, p: cost.p, maxmem: 256 * N * cost.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

export async function hashPassword(password: string, cost: PasswordCost = DEFAULT_PASSWORD_COST): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.log2N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, log2N, r, p, salt, expected] = parts as [string, string, string, string, string, string];
  const key = await derive(password, Buffer.from(salt, 'base64url'), { log2N: Number(log2N), r: Number(r), p: Number(p) });
  const want = Buffer.from(expected, 'base64url');
  return want.length === key.length && timingSafeEqual(want, key);
}

/**
 * A hash of a random password, computed once, so that sign-in with an unknown username spends
 * the same time as with a wrong password (no account enumeration through timing).
 */
export async function makeDecoyHash(cost: PasswordCost = DEFAULT_PASSWORD_COST): Promise<string> {
  return hashPassword(randomBytes(18).toString('base64url'), cost);
}
