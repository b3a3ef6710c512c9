/**
 * Issue #36 §1: what live streams write, batched. Every write to a socket is a system call, and a
 * fan-out of one event to 1,000 streams is 1,000 of them; at 100 events/s that alone exceeds a
 * core. So an event is queued on each stream (one Buffer shared by all streams that get the same
 * bytes) and the streams with something queued are flushed together once per window: all the
 * events a stream gathered in the window go out in one write to its socket (corked, so the shared
 * Buffers are handed over as they are: copying them into one per stream cost more than it saved). A flush writes at most `perTurn`
 * streams and continues on the next turn of the event loop, so other requests (/healthz, pages)
 * are answered between chunks however large the fan-out.
 *
 * Memory is bounded: a stream whose reader does not keep up (bytes waiting in its socket plus
 * queued here over `maxBuffered`) is ended with `overflowEvent` instead of buffering without end,
 * and its connection is cut if it has not read that within `abandonMs`.
 */

/** What the outbox needs of a response; node:http's ServerResponse fits. */
export interface StreamSink {
  write(chunk: Buffer): boolean;
  end(chunk?: Buffer): void;
  /** Bytes written but not yet handed to the socket's reader (node's writable buffer). */
  readonly writableLength: number;
  readonly writableEnded: boolean;
  /** Everything written has reached the socket's reader. */
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  destroy(): void;
  /** Holds writes back until uncork, which hands them to the socket in one system call. */
  cork(): void;
  uncork(): void;
}

/** How flushes are scheduled; injected so tests drive them (node's timers by default). */
export interface FlushScheduler {
  /** Runs `run` once `ms` have passed. */
  after(ms: number, run: () => void): void;
  /** Runs `run` on the next turn of the event loop, after pending I/O. */
  nextTurn(run: () => void): void;
}

export const nodeScheduler: FlushScheduler = {
  after: (ms, run) => {
    setTimeout(run, ms);
  },
  nextTurn: (run) => {
    setImmediate(run);
  },
};

export interface OutboxOptions {
  /** How long the first queued event waits for others before its stream is written (ms). */
  windowMs: number;
  /** Streams written per turn of the event loop. */
  perTurn: number;
  /** Bytes a stream may hold unread (socket buffer plus queue) before it is ended. */
  maxBuffered: number;
  /** The last event written to a stream ended for falling behind. */
  overflowEvent: Buffer;
  /** How long such a stream may take to read its last bytes before its connection is cut (ms). */
  abandonMs: number;
  /** Called once per stream ended for falling behind (a metric). */
  onOverflow?: () => void;
  scheduler?: FlushScheduler;
}

/** One stream's queue. */
export interface Outbox {
  /** Queues `chunk` for the next flush (nothing once the stream ended). */
  send(chunk: Buffer): void;
  /** Writes what is queued and `last` at once, then ends the response. */
  end(last?: Buffer): void;
  /** Forgets what is queued (the connection closed). */
  discard(): void;
}

class StreamQueue implements Outbox {
  pending: Buffer[] = [];
  pendingBytes = 0;
  done = false;

  constructor(
    private readonly outboxes: StreamOutboxes,
    readonly sink: StreamSink,
  ) {}

  send(chunk: Buffer): void {
    if (this.done || this.sink.writableEnded || this.sink.destroyed) return;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.sink.writableLength + this.pendingBytes > this.outboxes.options.maxBuffered) {
      // A reader this far behind would only grow our memory: it is told to reload instead.
      this.pending = [];
      this.pendingBytes = 0;
      this.outboxes.options.onOverflow?.();
      this.end(this.outboxes.options.overflowEvent);
      // A reader that stopped reading altogether would hold what it left unread for ever.
      this.outboxes.abandonLater(this.sink);
      return;
    }
    this.outboxes.mark(this);
  }

  end(last?: Buffer): void {
    if (this.done) return;
    if (last) this.pending.push(last);
    this.write();
    this.done = true;
    this.outboxes.unmark(this);
    if (!this.sink.writableEnded && !this.sink.destroyed) this.sink.end();
  }

  discard(): void {
    this.done = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.outboxes.unmark(this);
  }

  /** Everything queued, in one write to the socket. */
  write(): void {
    const pending = this.pending;
    if (pending.length === 0) return;
    this.pending = [];
    this.pendingBytes = 0;
    if (this.sink.writableEnded || this.sink.destroyed) return;
    if (pending.length === 1) {
      this.sink.write(pending[0] as Buffer);
      return;
    }
    this.sink.cork();
    for (const chunk of pending) this.sink.write(chunk);
    this.sink.uncork();
  }
}

/** The outboxes of the live streams of one app. */
export class StreamOutboxes {
  /** Streams with something queued, in the order they first got it. */
  private readonly dirty = new Set<StreamQueue>();
  private scheduled = false;
  private readonly scheduler: FlushScheduler;

  constructor(readonly options: OutboxOptions) {
    this.scheduler = options.scheduler ?? nodeScheduler;
  }

  open(sink: StreamSink): Outbox {
    return new StreamQueue(this, sink);
  }

  /** @internal */
  mark(queue: StreamQueue): void {
    this.dirty.add(queue);
    if (this.scheduled) return;
    this.scheduled = true;
    this.scheduler.after(this.options.windowMs, () => this.flush());
  }

  /** @internal */
  abandonLater(sink: StreamSink): void {
    this.scheduler.after(this.options.abandonMs, () => {
      if (!sink.writableFinished && !sink.destroyed) sink.destroy();
    });
  }

  /** @internal */
  unmark(queue: StreamQueue): void {
    this.dirty.delete(queue);
  }

  /** Writes up to `perTurn` streams, and goes on next turn while some remain. */
  private flush(): void {
    let written = 0;
    for (const queue of this.dirty) {
      if (written >= this.options.perTurn) break;
      this.dirty.delete(queue);
      queue.write();
      written += 1;
    }
    if (this.dirty.size > 0) this.scheduler.nextTurn(() => this.flush());
    else this.scheduled = false;
  }
}
