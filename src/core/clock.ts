/**
 * Time is injected everywhere (DESIGN §3, §9.9) so that the 10-minute code lifetime, the 1-hour
 * access token and the 30-day refresh token are tested without sleeping.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; for tests and deterministic tooling. */
export class ManualClock implements Clock {
  constructor(private current: number = Date.UTC(2026, 10, 21, 12, 0, 0)) {}
  now(): number {
    return this.current;
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
