/**
 * Time is injected everywhere (DESIGN §3, §9.9) so that the 10-minute code lifetime, the 1-hour
 * access token and the 30-day refresh token are tested without sleeping.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms` (a deliberate slowdown, e.g. of sign-in to an account under attack); never blocks the event loop. */
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
};

/** Where a ManualClock starts unless told otherwise. */
export const MANUAL_CLOCK_START = Date.UTC(2026, 10, 21, 12, 0, 0);

/** A clock that only moves when told to; for tests and deterministic tooling. */
export class ManualClock implements Clock {
  /** Every `sleep` asked for, in order; they resolve at once, the time stays put. */
  readonly sleeps: number[] = [];
  constructor(private current: number = MANUAL_CLOCK_START) {}
  now(): number {
    return this.current;
  }
  sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    return Promise.resolve();
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
