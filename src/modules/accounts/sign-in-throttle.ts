import { isIP } from 'node:net';
import { MINUTE } from '../../core/clock.js';
import { RateLimitedError } from '../../core/errors.js';
import type { BucketRule, BucketStore } from '../../rate-limit/bucket.js';
import { usernameKey } from '../directory/people.js';

/**
 * Throttling of failed sign-ins (issue #2 §5), counted in the shared bucket store so that every
 * instance sees the same counts when REDIS_URL is set:
 *  - per account: 5 failures per 15 minutes stops password guessing against one person, whatever
 *    the number of addresses it comes from;
 *  - per client address: 20 failures per 15 minutes stops one client spraying many accounts, yet
 *    leaves room for a shared office or school address where several people mistype.
 * The window starts with the first failure and lasts 15 minutes (the bucket rule of
 * rate-limit/bucket.ts); when a limit is reached, attempts are refused before any password is
 * checked, the correct one included, until the window ends.
 */
export const ACCOUNT_FAILURE_RULE: BucketRule = { limit: 5, windowMs: 15 * MINUTE };
export const ADDRESS_FAILURE_RULE: BucketRule = { limit: 20, windowMs: 15 * MINUTE };

export const THROTTLED_MESSAGE = 'Too many failed sign-in attempts.';

export interface SignInThrottle {
  /** Records a failed attempt (wrong password or unknown account) against both keys. */
  failed(): Promise<void>;
  /** A successful sign-in clears the account's count (not the address's: see `succeeded`). */
  succeeded(): Promise<void>;
}

/**
 * Keys on the username as typed (case-folded) rather than on an account id, so unknown usernames
 * are counted exactly like known ones and the throttle reveals nothing about which exist.
 */
function accountKey(username: string): string {
  return `signin:account:${usernameKey(username.trim())}`;
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
 * Checks both limits (the address one only when an address is given) before a sign-in attempt and returns the handle to report its outcome.
 * Throws RateLimitedError (429 with Retry-After) when either limit has been reached.
 *
 * The account bucket is taken up front, atomically, so parallel guesses against one account
 * cannot overshoot its limit; a success then clears it. The address bucket is only peeked here
 * and taken on failure, so successful sign-ins from a busy shared address never count against it.
 */
export async function beginSignIn(buckets: BucketStore, now: number, username: string, address: string | undefined): Promise<SignInThrottle> {
  const byAddress = address === undefined ? undefined : addressKey(address);
  const byAccount = accountKey(username);
  if (byAddress !== undefined) {
    const addressState = await buckets.peek(byAddress, ADDRESS_FAILURE_RULE, now);
    if (!addressState.allowed) throw new RateLimitedError(addressState.resetAfterMs, THROTTLED_MESSAGE);
  }
  const accountState = await buckets.take(byAccount, ACCOUNT_FAILURE_RULE, now);
  if (!accountState.allowed) throw new RateLimitedError(accountState.resetAfterMs, THROTTLED_MESSAGE);
  return {
    async failed() {
      if (byAddress !== undefined) await buckets.take(byAddress, ADDRESS_FAILURE_RULE, now);
    },
    async succeeded() {
      // The address count stays: otherwise signing in to one's own account between guesses at
      // others would wipe it.
      await buckets.reset(byAccount);
    },
  };
}
