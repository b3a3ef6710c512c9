/**
 * Issued secrets (DESIGN §3): prefixed, drawn from the injected CSPRNG, stored only as SHA-256
 * digests and compared in constant time; every webhook and bearer request checks one
 * (docs/performance.md §Ids, secrets and randomness).
 * Invariant: no secret is stored or compared in plain text, and matchesHash takes the same time
 * whatever the presented value. Tested by test/unit/secrets.test.ts.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { Random } from './random.js';

/**
 * Every secret the service issues carries a short type prefix so a leaked one is recognisable
 * (DESIGN §3), and is drawn from [A-Za-z0-9_-] so that every client encoding of HTTP Basic
 * decodes it alike (OAUTH-CHECKLIST, interoperability facts).
 */
export const SecretPrefix = {
  session: 'ghs',
  clientSecret: 'ghcs',
  authorizationCode: 'ghac',
  accessToken: 'ghat',
  refreshToken: 'ghrt',
  botToken: 'ghbt',
  webhookToken: 'ghwt',
  invite: 'ghinv',
  emailVerification: 'ghev',
  passwordReset: 'ghpr',
  signUpLink: 'ghsu',
  registrationAccessToken: 'ghra',
  initialAccessToken: 'ghia',
  deviceCode: 'ghdc',
} as const;
export type SecretKind = keyof typeof SecretPrefix;

/** 32 random bytes = 256 bits, above RFC 6749 §10.10's 128-bit floor and 2.1's 160-bit SHOULD. */
const SECRET_BYTES = 32;

export interface IssuedSecret {
  /** Shown once to its owner, never stored. */
  plain: string;
  /** What the database keeps (DESIGN §3: stored only as a SHA-256 hash). */
  hash: string;
}

export function issueSecret(random: Random, kind: SecretKind, bytes = SECRET_BYTES): IssuedSecret {
  const plain = `${SecretPrefix[kind]}_${random.bytes(bytes).toString('base64url')}`;
  return { plain, hash: hashSecret(plain) };
}

/** SHA-256 is enough for high-entropy secrets: no dictionary can reach 256 random bits. */
export function hashSecret(plain: string): string {
  // crypto.hash (one shot, Node ≥ 20.12): a third of createHash's cost on every presented secret.
  return hash('sha256', plain, 'base64url');
}

/**
 * Constant-time, length-independent comparison (OAUTH-CHECKLIST D8, I1): both sides are hashed
 * first, so neither the content nor the length of the expected value leaks through timing.
 */
export function safeEqual(a: string, b: string): boolean {
  const ha = hash('sha256', a, 'buffer');
  const hb = hash('sha256', b, 'buffer');
  return timingSafeEqual(ha, hb);
}

/**
 * Whether a presented secret matches a stored hash (DESIGN §3: hashes compared in constant time).
 * Both sides are SHA-256 digests of the same fixed length, so they are compared directly: hashing
 * them once more, as safeEqual does for values of any length, would only cost two more digests on
 * every webhook request (docs/performance.md §Ids, secrets and randomness). A stored value of another length never matches.
 */
export function matchesHash(plain: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(plain), 'latin1');
  const stored = Buffer.from(storedHash, 'latin1');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/** True when `plain` looks like a secret of the given kind; a cheap filter before any lookup. */
export function hasPrefix(plain: string, kind: SecretKind): boolean {
  return plain.startsWith(PREFIXES[kind]);
}

/** `ghat_`…: built once, not on every presented secret. */
const PREFIXES = Object.fromEntries(Object.entries(SecretPrefix).map(([kind, prefix]) => [kind, `${prefix}_`])) as Record<SecretKind, string>;
