import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startOutboxWorker, type OutboxWorker } from '../../src/storage/outbox.js';

/**
 * The outbox worker's wake-ups (issue #40 §1, docs/app-events.md): a poke runs a round at once;
 * between rounds the worker sleeps until the next row is due, at most the fallback interval, so a
 * retry is sent at its time and an idle queue costs one look per fallback interval. Fake timers
 * stand for the minutes.
 */
describe('outbox worker schedule', () => {
  let worker: OutboxWorker<void> | undefined;
  let rounds: number;
  let due: number | undefined;
  const now = () => Date.now();
  const start = (intervalMs = 30_000, firstRoundAfterMs?: number) => {
    worker = startOutboxWorker(
      async () => {
        rounds += 1;
      },
      { intervalMs, onError: (error) => expect.fail(String(error)), schedule: { now, nextDueAt: async () => due }, ...(firstRoundAfterMs === undefined ? {} : { firstRoundAfterMs }) },
    );
  };
  /** Lets the timers pass `ms` and the rounds they start finish. */
  const pass = async (ms: number) => {
    await vi.advanceTimersByTimeAsync(ms);
  };

  beforeEach(() => {
    vi.useFakeTimers();
    rounds = 0;
    due = undefined;
  });
  afterEach(async () => {
    await worker?.stop();
    vi.useRealTimers();
  });

  it('with firstRoundAfterMs, the start-up round waits that long (tests that count statements set it), a poke still runs at once', async () => {
    start(30_000, 60_000);
    await pass(0);
    expect(rounds).toBe(0);
    worker?.poke();
    await pass(0);
    expect(rounds).toBe(1);
  });

  it('runs a round at start (rows a restart left due), then sleeps the fallback interval while the queue is empty', async () => {
    start();
    await pass(0);
    expect(rounds).toBe(1);
    await pass(29_000);
    expect(rounds).toBe(1);
    await pass(1_000);
    expect(rounds).toBe(2);
  });

  it('a poke runs a round at once', async () => {
    start();
    await pass(0);
    worker?.poke();
    await pass(0);
    expect(rounds).toBe(2);
  });

  it('wakes when the next row is due, not at the fallback poll', async () => {
    start();
    due = now() + 7_000;
    await pass(0);
    expect(rounds).toBe(1);
    await pass(6_999);
    expect(rounds).toBe(1);
    due = undefined;
    await pass(1);
    expect(rounds).toBe(2);
  });

  it('a due time past the fallback interval waits only the fallback interval', async () => {
    due = Date.now() + 10 * 60_000;
    start(30_000);
    await pass(30_000);
    expect(rounds).toBe(2);
  });

  it('a row already due that the round did not take (another instance holds it) is looked at again after a second, not in a busy loop', async () => {
    due = Date.now() - 1;
    start();
    await pass(0);
    expect(rounds).toBe(1);
    await pass(999);
    expect(rounds).toBe(1);
    await pass(1);
    expect(rounds).toBe(2);
  });

  it('stops: no round after stop()', async () => {
    start();
    await pass(0);
    await worker?.stop();
    worker?.poke();
    await pass(60_000);
    expect(rounds).toBe(1);
  });
});
