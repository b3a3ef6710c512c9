import { isIP } from 'node:net';
import { MINUTE, SECOND } from '../../core/clock.js';
import { RateLimitedError } from '../../core/errors.js';
import type { BucketRule, BucketStore } from '../../rate-limit/bucket.js';
import { usernameKey } from '../directory/people.js';

/**
 * Throttling of failed sign-ins, counted in the shared bucket store so that every instance sees
 * the same counts when REDIS_URL is set. Nobody can lock another person out (issue #21 §2; OWASP
 * Authentication Cheat Sheet, "Account Lockout": lockout lets an attacker deny service, so
 * throttle the attacker's source and slow the account down instead):
 *  - per (account, address): 5 failures per 15 minutes refuse further attempts at that account
 *    from that address, the correct password included: this is what stops guessing from one
 *    source, and it never touches the owner on any other address;
 *  - per address: 20 failures per 15 minutes, whatever the accounts, stop one source spraying
 *    many accounts, yet leave room for a shared office or school address where several mistype;
 *  - per account: no hard limit. Past 10 failures in 15 minutes from all addresses together,
 *    every attempt at that account waits before its password is checked (`slowdownMs`: from
 *    0.5 s, doubling every 5 failures, at most 8 s), so a botnet spread over many addresses
 *    gets few guesses per minute while the owner, from any address, still signs in.
 * Each window starts with its first failure and lasts 15 minutes (rate-limit/bucket.ts).
 */
export const PAIR_FAILURE_RULE: BucketRule = { limit: 5, windowMs: 15 * MINUTE };
export const ADDRESS_FAILURE_RULE: BucketRule = { limit: 20, windowMs: 15 * MINUTE };
/** Counts an account's failures for the slowdown; the limit is only the counter's ceiling, never a refusal. */
export const ACCOUNT_FAILURE_COUNTER: BucketRule = { limit: 1_000_000, windowMs: 15 * MINUTE };
export const ACCOUNT_SLOWDOWN_AFTER = 10;
export const ACCOUNT_SLOWDOWN_MAX_MS = 8 * SECOND;

export const THROTTLED_MESSAGE = 'Too many failed sign-in attempts.';

/** The wait before an attempt at an account that has had `failures` failures in its window. */
export function slowdownMs(failures: number): number {
  if (failures < ACCOUNT_SLOWDOWN_AFTER) return 0;
  const doublings = Math.floor((failures - ACCOUNT_SLOWDOWN_AFTER) / 5);
  return Math.min(ACCOUNT_SLOWDOWN_MAX_MS, 500 * 2 ** Math.min(doublings, 8));
}

export interface SignInThrottle {
  /** How long to wait before checking the password (the account's slowdown); 0 when it is quiet. */
  delayMs: number;
  /** Records a failed attempt (wrong password or unknown account) against the address and the account. */
  failed(): Promise<void>;
  /** A successful sign-in clears its (account, address) count (not the others: see `succeeded`). */
  succeeded(): Promise<void>;
}

/**
 * Keys on the username as typed (case-folded) rather than on an account id, so unknown usernames
 * are counted exactly like known ones and the throttle reveals nothing about which exist.
 */
function accountName(username: string): string {
  return usernameKey(username.trim());
}

function addressKey(address: string): string {
  return `signin:address:${addressBlock(address)}`;
}

/**
 * The unit an address is counted by: an IPv4 address as is, an IPv6 address by its /64 prefix,
 * the smallest block one subscriber usually gets, so rotating within it gains nothing.
 * IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function addressBlock(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::', 2);
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = address.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = address.includes('::') ? [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups] : headGroups;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * Checks the limits before a sign-in attempt and returns the handle to report its outcome.
 * Throws RateLimitedError (429 with Retry-After) when the address, or this account from this
 * address, has reached its limit. Without an address (the CLI) only the account's slowdown applies.
 *
 * The (account, address) bucket is taken up front, atomically, so parallel guesses from one
 * source cannot overshoot its limit; a success then clears it. The address bucket is only peeked
 * here and taken on failure, so successful sign-ins from a busy shared address never count.
 */
export async function beginSignIn(buckets: BucketStore, now: number, username: string, address: string | undefined): Promise<SignInThrottle> {
  const account = accountName(username);
  const accountKey = `signin:account:${account}`;
  const byAddress = address === undefined ? undefined : addressKey(address);
  const byPair = address === undefined ? undefined : `signin:pair:${addressBlock(address)}:${account}`;
  if (byAddress !== undefined) {
    const addressState = await buckets.peek(byAddress, ADDRESS_FAILURE_RULE, now);
    if (!addressState.allowed) throw new RateLimitedError(addressState.resetAfterMs, THROTTLED_MESSAGE);
  }
  if (byPair !== undefined) {
    const pairState = await buckets.take(byPair, PAIR_FAILURE_RULE, now);
    if (!pairState.allowed) throw new RateLimitedError(pairState.resetAfterMs, THROTTLED_MESSAGE);
  }
  const accountState = await buckets.peek(accountKey, ACCOUNT_FAILURE_COUNTER, now);
  return {
    delayMs: slowdownMs(ACCOUNT_FAILURE_COUNTER.limit - accountState.remaining),
    async failed() {
      if (byAddress !== undefined) await buckets.take(byAddress, ADDRESS_FAILURE_RULE, now);
      await buckets.take(accountKey, ACCOUNT_FAILURE_COUNTER, now);
    },
    async succeeded() {
      // Only this source's count is cleared. The address count stays (else signing in to one's
      // own account between guesses at others would wipe it), and so does the account's (else the
      // owner signing in would lift the slowdown that holds off everyone else).
      if (byPair !== undefined) await buckets.reset(byPair);
    },
  };
}
