import { scrypt, randomBytes, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { RateLimitedError } from './errors.js';

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

/**
 * A counting semaphore with a bounded queue: at most `limit` tasks run at once, at most
 * `maxWaiting` wait (beyond that `run` refuses at once rather than grow without bound).
 */
export class HashLane {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(
    readonly limit: number,
    readonly maxWaiting: number,
  ) {}

  /** Tasks running now and waiting to run. */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) {
      if (this.waiting.length >= this.maxWaiting) throw new RateLimitedError(1000, 'The service is busy creating accounts. Try again in a moment.');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` never overshoots the limit.
      if (next) next();
      else this.active -= 1;
    }
  }
}

/**
 * scrypt runs on libuv's thread pool (4 threads by default, shared with file system and DNS
 * work), so hashing is bounded process-wide in two lanes (issue #21 §2): a flood of sign-ups
 * once pushed a sign-in from 214 ms to 7.5 s by filling every thread. New hashes (sign-up,
 * password change) run one at a time; verifications (sign-in) have two threads of their own and
 * never queue behind new hashes. One thread always stays free for the rest of the process.
 * The limit is per process because the thread pool is.
 */
export const PASSWORD_LANES = {
  create: new HashLane(1, 256),
  verify: new HashLane(2, 256),
} as const;

function derive(password: string, salt: Buffer, cost: PasswordCost): Promise<Buffer> {
  const N = 2 ** cost.log2N;
  const options: ScryptOptions = { N, r: cost.r, p: cost.p, maxmem: 256 * N * cost.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** A new hash (sign-up, password change), in the `create` lane. */
export async function hashPassword(password: string, cost: PasswordCost = DEFAULT_PASSWORD_COST): Promise<string> {
  const salt = randomBytes(16);
  const key = await PASSWORD_LANES.create.run(() => derive(password, salt, cost));
  return ['scrypt', cost.log2N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Checks a password against its stored hash, in the `verify` lane (sign-in never waits for sign-ups). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, log2N, r, p, salt, expected] = parts as [string, string, string, string, string, string];
  const key = await PASSWORD_LANES.verify.run(() => derive(password, Buffer.from(salt, 'base64url'), { log2N: Number(log2N), r: Number(r), p: Number(p) }));
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
