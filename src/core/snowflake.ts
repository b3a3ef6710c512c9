import type { Clock } from './clock.js';

/**
 * 64-bit time-ordered ids (DESIGN §1), laid out like Discord's snowflakes:
 *   42 bits milliseconds since GATEHOUSE_EPOCH | 10 bits worker id | 12 bits sequence.
 * Ids travel as decimal strings because they exceed 2^53.
 * Uniqueness across instances comes from the worker id, which each process leases from the
 * database at start-up (storage/worker-lease), so no two live processes share one.
 */
export const GATEHOUSE_EPOCH = Date.UTC(2026, 0, 1);
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
    let ms = Math.max(this.clock.now() - GATEHOUSE_EPOCH, this.lastMs, 0);
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

/** The creation time encoded in an id, in ms since the Unix epoch. */
export function snowflakeTime(id: string): number {
  return Number(BigInt(id) >> 22n) + GATEHOUSE_EPOCH;
}

/** A syntactically valid snowflake: 1–20 decimal digits that fit in 63 bits. */
export function isSnowflake(value: string): boolean {
  if (!/^[0-9]{1,20}$/.test(value)) return false;
  // Up to 18 digits always fits (10^18 < 2^63): only longer ids need the BigInt parse. Every
  // webhook URL request asks this (docs/performance.md §Tenth round).
  return value.length <= 18 || BigInt(value) < MAX_SNOWFLAKE_EXCLUSIVE;
}

const MAX_SNOWFLAKE_EXCLUSIVE = 1n << 63n;
