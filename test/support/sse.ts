import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import { createTestApp, type TestApp } from './app.js';
import type { PageAgent } from './page-agent.js';

/** One server-sent event as a browser's EventSource would see it. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
  /** Comment lines (": keep-alive") seen in this block. */
  comments: string[];
}

/**
 * Reads a text/event-stream over fetch, as EventSource would, for tests against a listening
 * server: `next()` waits for the next event (or comment block) that matches.
 */
export class SseReader {
  private buffer = '';
  private readonly events: SseEvent[] = [];
  private streamReader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  /**
   * The read in flight, kept across calls: a `next()` that times out leaves it pending, and the
   * chunk it resolves with belongs to the next call. A new read instead would be queued behind it
   * and that chunk (the event it carries) lost.
   */
  private pendingRead: ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> | undefined;
  private readonly decoder = new TextDecoder();
  /** True once the server ended the stream. */
  ended = false;

  private constructor(
    readonly response: Response,
    private readonly controller: AbortController,
  ) {}

  /** Taken on first read, so a refused answer's body can still be read with response.text(). */
  private get reader(): ReadableStreamDefaultReader<Uint8Array> {
    if (!this.streamReader) {
      if (!this.response.body) throw new Error('no body');
      this.streamReader = this.response.body.getReader();
    }
    return this.streamReader;
  }

  /** Opens the stream; resolves when the response headers have arrived (whatever the status). */
  static async open(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
    const controller = new AbortController();
    const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
    return new SseReader(response, controller);
  }

  private parse(): void {
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end < 0) return;
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: SseEvent = { event: 'message', data: '', comments: [] };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) event.comments.push(line.slice(1).trim());
        else if (line.startsWith('data: ')) data.push(line.slice(6));
        else if (line.startsWith('event: ')) event.event = line.slice(7);
        else if (line.startsWith('id: ')) event.id = line.slice(4);
      }
      event.data = data.join('\n');
      this.events.push(event);
    }
  }

  /** The next event (or comment-only block) for which `match` holds; earlier ones are dropped. */
  async next(match: (e: SseEvent) => boolean = () => true, timeoutMs = 5000): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (this.events.length) {
        const e = this.events.shift() as SseEvent;
        if (match(e)) return e;
      }
      if (this.ended) throw new Error('the stream ended');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no matching event in time');
      let timer: NodeJS.Timeout | undefined;
      this.pendingRead ??= this.reader.read();
      const chunk = await Promise.race([
        this.pendingRead,
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), left);
        }),
      ]);
      clearTimeout(timer);
      if (chunk === 'timeout') throw new Error('no matching event in time');
      this.pendingRead = undefined;
      if (chunk.done) {
        this.ended = true;
        continue;
      }
      this.buffer += this.decoder.decode(chunk.value, { stream: true });
      this.parse();
    }
  }

  /** Resolves once the server has ended the stream (after reading what remained). */
  async untilEnded(timeoutMs = 5000): Promise<void> {
    await this.next(() => false, timeoutMs).catch((error: unknown) => {
      if (!this.ended) throw error;
    });
  }

  /** Closes the connection as a browser leaving the page would. */
  close(): void {
    this.controller.abort();
  }
}

/**
 * A test app listening on a free port, for tests that read event streams with fetch; returns its
 * base URL. `stopListening` then closes it.
 */
export async function listenForStreams(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

export async function stopListening(t: TestApp): Promise<void> {
  // fetch (undici) may keep a spare connection that never carries a request; the server would
  // wait for it on close. Every stream of the tests is closed by then.
  t.app.server.closeAllConnections();
  await t.close();
}

/** The cookie header a browser would send for `agent`'s session. */
export function cookieOf(agent: PageAgent): string {
  return [...agent.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
}

export interface LiveStreams {
  /** The test app, listening; set by the file's beforeAll. */
  readonly t: TestApp;
  readonly base: string;
  /** Opens a channel's event stream as `agent` (signed out without one); closed after the test. */
  follow(agent: PageAgent | undefined, channelId: string, query?: string, headers?: Record<string, string>): Promise<SseReader>;
}

/**
 * For a file of stream tests: registers the vitest hooks that start one listening test app, close
 * every stream a test opened after it (and restore real timers), and stop the app at the end.
 */
export function liveStreams(): LiveStreams {
  let app: TestApp | undefined;
  let base = '';
  const open: SseReader[] = [];
  beforeAll(async () => {
    app = await createTestApp();
    base = await listenForStreams(app);
  });
  afterEach(() => {
    vi.useRealTimers();
    for (const s of open.splice(0)) s.close();
  });
  afterAll(async () => {
    if (app) await stopListening(app);
  });
  return {
    get t() {
      if (!app) throw new Error('liveStreams(): the app starts in beforeAll');
      return app;
    },
    get base() {
      return base;
    },
    async follow(agent, channelId, query = '', headers = {}) {
      const reader = await SseReader.open(`${base}/channels/${channelId}/events${query}`, { ...(agent ? { cookie: cookieOf(agent) } : {}), ...headers });
      open.push(reader);
      return reader;
    },
  };
}
