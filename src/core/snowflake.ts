/**
 * Snowflake ids (DESIGN §1): Discord-style 64-bit ids, their creation time, and the check of an
 * id presented in a URL or a body.
 * Invariant: ids of one process never repeat, no two live processes share a worker id, and
 * isSnowflake accepts exactly the canonical decimal form of 0 to 2^63 − 1 (no leading zero).
 * Tested by test/unit/snowflake.test.ts and test/http/canonical-ids.test.ts.
 */
import type { Clock } from './clock.js';

/**
 * 64-bit time-ordered ids (DESIGN §1), laid out like Discord's snowflakes:
 *   42 bits milliseconds since DISCORD_EPOCH | 10 bits worker id | 12 bits sequence.
 * Ids travel as decimal strings because they exceed 2^53.
 * DESIGN §1: on Discord's epoch, so every Discord library derives a message's creation time
 * (`created_at`, `createdTimestamp`) from its id. Ids issued before the move to this epoch counted
 * from LEGACY_GATEHOUSE_EPOCH (2026-01-01); they keep their value, and every id issued now is
 * larger than any of them, because (now − 2015) ms always exceeds (then − 2026) ms.
 * Uniqueness across instances comes from the worker id, which each process leases from the
 * database at start-up (storage/worker-lease), so no two live processes share one.
 */
/** Discord's epoch, 2015-01-01T00:00:00Z = 1420070400000 ms. */
export const DISCORD_EPOCH = 1420070400000;
/** The epoch of ids issued before DESIGN §1 moved to Discord's (their times read 11 years early). */
export const LEGACY_GATEHOUSE_EPOCH = Date.UTC(2026, 0, 1);
export const MAX_WORKER_ID = 1023;
const SEQUENCE_MASK = 0xfffn;

export class SnowflakeGenerator {
  private lastMs = -1;
  private sequence = 0n;

  constructor(
    private readonly clock: Clock,
    private readonly workerId: number,
  ) {
    if (!Number.isInteger(workerId) || workerId < 0 || workerId > MAX_WORKER_ID) {
      throw new RangeError(`worker id must be an integer in 0..${MAX_WORKER_ID}`);
    }
  }

  next(): string {
    // A clock that steps backwards (NTP, a test's ManualClock) must not produce a repeat:
    // keep counting from the last millisecond used.
    let ms = Math.max(this.clock.now() - DISCORD_EPOCH, this.lastMs, 0);
    if (ms === this.lastMs) {
      this.sequence = (this.sequence + 1n) & SEQUENCE_MASK;
      // 4096 ids in one millisecond: borrow the next millisecond instead of busy-waiting.
      if (this.sequence === 0n) ms += 1;
    } else {
      this.sequence = 0n;
    }
    this.lastMs = ms;
    return ((BigInt(ms) << 22n) | (BigInt(this.workerId) << 12n) | this.sequence).toString();
  }
}

/** The creation time encoded in an id (as every Discord library reads it), in ms since the Unix epoch. */
export function snowflakeTime(id: string): number {
  return Number(BigInt(id) >> 22n) + DISCORD_EPOCH;
}

/**
 * A syntactically valid snowflake: the canonical decimal form of a number below 2^63. Issue #36
 * §5: a leading zero is refused, so one row has one id: `0123` would otherwise find row 123 (both
 * databases compare it as a number) and every resource would answer under endless aliases.
 */
export function isSnowflake(value: string): boolean {
  if (!/^(?:0|[1-9][0-9]{0,18})$/.test(value)) return false;
  // Up to 18 digits always fits (10^18 < 2^63): only 19-digit ids need the BigInt parse. Every
  // webhook URL request asks this (docs/performance.md §Ids, secrets and randomness).
  return value.length <= 18 || BigInt(value) < MAX_SNOWFLAKE_EXCLUSIVE;
}

const MAX_SNOWFLAKE_EXCLUSIVE = 1n << 63n;
