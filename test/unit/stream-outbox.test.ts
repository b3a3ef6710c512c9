import { describe, expect, it } from 'vitest';
import { StreamOutboxes, type FlushScheduler, type StreamSink } from '../../src/realtime/stream-outbox.js';

/**
 * A response that records what reaches its socket: one entry per write, or per cork…uncork batch
 * (one system call); `unread` plays the bytes its socket still holds.
 */
class FakeSink implements StreamSink {
  writes: string[] = [];
  private batch: string[] | undefined;
  ended = false;
  unread = 0;
  destroyed = false;
  finished = false;
  get writableFinished(): boolean {
    return this.finished;
  }
  destroy(): void {
    this.destroyed = true;
  }
  get writableLength(): number {
    return this.unread;
  }
  get writableEnded(): boolean {
    return this.ended;
  }
  write(chunk: Buffer): boolean {
    if (this.batch) this.batch.push(chunk.toString());
    else this.writes.push(chunk.toString());
    return true;
  }
  cork(): void {
    this.batch = [];
  }
  uncork(): void {
    if (this.batch) this.writes.push(this.batch.join(''));
    this.batch = undefined;
  }
  end(chunk?: Buffer): void {
    if (chunk) this.writes.push(chunk.toString());
    this.ended = true;
  }
}

/** Flushes run only when the test says so: `window()` fires the timer, `turn()` the next turn. */
class ManualScheduler implements FlushScheduler {
  timers: Array<{ ms: number; run: () => void }> = [];
  turns: Array<() => void> = [];
  after(ms: number, run: () => void): void {
    this.timers.push({ ms, run });
  }
  nextTurn(run: () => void): void {
    this.turns.push(run);
  }
  window(): void {
    const timers = this.timers;
    this.timers = [];
    for (const timer of timers) timer.run();
  }
  turn(): void {
    const turns = this.turns;
    this.turns = [];
    for (const run of turns) run();
  }
}

const bytes = (text: string) => Buffer.from(text);

function outboxes(scheduler: ManualScheduler, overrides: { perTurn?: number; maxBuffered?: number; onOverflow?: () => void } = {}) {
  return new StreamOutboxes({ windowMs: 25, perTurn: overrides.perTurn ?? 100, maxBuffered: overrides.maxBuffered ?? 1024, overflowEvent: bytes('event: behind\ndata: x\n\n'), abandonMs: 30_000, onOverflow: overrides.onOverflow, scheduler });
}

describe('live stream outboxes (issue #36 §1: fewer writes, bounded latency and memory)', () => {
  it('the events a stream gets within one window reach it in one write, in the order they were sent', () => {
    const scheduler = new ManualScheduler();
    const all = outboxes(scheduler);
    const sink = new FakeSink();
    const outbox = all.open(sink);
    outbox.send(bytes('one;'));
    outbox.send(bytes('two;'));
    outbox.send(bytes('three;'));
    expect(sink.writes).toEqual([]);
    expect(scheduler.timers.map((t) => t.ms)).toEqual([25]);

    scheduler.window();
    expect(sink.writes).toEqual(['one;two;three;']);
    // Nothing queued: no timer waits.
    expect(scheduler.timers).toEqual([]);
    outbox.send(bytes('four;'));
    scheduler.window();
    expect(sink.writes).toEqual(['one;two;three;', 'four;']);
  });

  it('a large fan-out is written a chunk of streams per turn, so other work runs in between', () => {
    const scheduler = new ManualScheduler();
    const all = outboxes(scheduler, { perTurn: 2 });
    const sinks = Array.from({ length: 5 }, () => new FakeSink());
    const boxes = sinks.map((sink) => all.open(sink));
    for (const box of boxes) box.send(bytes('event;'));
    scheduler.window();
    expect(sinks.map((s) => s.writes.length)).toEqual([1, 1, 0, 0, 0]);
    // An event sent meanwhile to a stream already written joins the queue behind the others.
    boxes[0]?.send(bytes('later;'));
    scheduler.turn();
    expect(sinks.map((s) => s.writes.length)).toEqual([1, 1, 1, 1, 0]);
    scheduler.turn();
    expect(sinks.map((s) => s.writes.length)).toEqual([2, 1, 1, 1, 1]);
    expect(sinks[0]?.writes).toEqual(['event;', 'later;']);
    expect(scheduler.turns).toEqual([]);
  });

  it('a stream whose reader falls more than the limit behind is ended with the overflow event, and later events are dropped', () => {
    const scheduler = new ManualScheduler();
    let overflows = 0;
    const all = outboxes(scheduler, { maxBuffered: 100, onOverflow: () => (overflows += 1) });
    const slow = new FakeSink();
    const quick = new FakeSink();
    const slowBox = all.open(slow);
    const quickBox = all.open(quick);
    slow.unread = 90;
    slowBox.send(bytes('0123456789'));
    quickBox.send(bytes('0123456789'));
    expect(slow.ended).toBe(false);
    // 90 unread + 11 queued > 100.
    slowBox.send(bytes('a'));
    expect(slow.ended).toBe(true);
    expect(slow.writes).toEqual(['event: behind\ndata: x\n\n']);
    expect(overflows).toBe(1);
    slowBox.send(bytes('more'));
    scheduler.window();
    expect(slow.writes).toEqual(['event: behind\ndata: x\n\n']);
    expect(quick.writes).toEqual(['0123456789']);
    expect(quick.ended).toBe(false);
  });

  it('a stream ended for falling behind that has not read its last event within abandonMs is cut; one that read it is left alone', () => {
    const scheduler = new ManualScheduler();
    const all = outboxes(scheduler, { maxBuffered: 10 });
    const stuck = new FakeSink();
    const slow = new FakeSink();
    all.open(stuck).send(bytes('more than ten bytes'));
    all.open(slow).send(bytes('more than ten bytes'));
    expect(scheduler.timers.map((t) => t.ms)).toEqual([30_000, 30_000]);
    slow.finished = true;
    scheduler.window();
    expect(stuck.destroyed).toBe(true);
    expect(slow.destroyed).toBe(false);
  });

  it('ending a stream writes what it has queued and the last event first, in one write', () => {
    const scheduler = new ManualScheduler();
    const all = outboxes(scheduler);
    const sink = new FakeSink();
    const outbox = all.open(sink);
    outbox.send(bytes('one;'));
    outbox.end(bytes('end;'));
    expect(sink.writes).toEqual(['one;end;']);
    expect(sink.ended).toBe(true);
    outbox.send(bytes('two;'));
    scheduler.window();
    expect(sink.writes).toEqual(['one;end;']);
  });

  it('a closed connection’s queue is forgotten, and a destroyed response is never written', () => {
    const scheduler = new ManualScheduler();
    const all = outboxes(scheduler);
    const gone = new FakeSink();
    const dropped = new FakeSink();
    const goneBox = all.open(gone);
    const droppedBox = all.open(dropped);
    goneBox.send(bytes('x'));
    droppedBox.send(bytes('y'));
    goneBox.discard();
    dropped.destroyed = true;
    scheduler.window();
    expect(gone.writes).toEqual([]);
    expect(dropped.writes).toEqual([]);
  });
});
