/**
 * What: where the process logs go (issue #26 §0, issue #25 §9). Not a terminal: JSON lines on
 * stdout through an asynchronous, bounded buffer (sonic-boom), so a request never waits for a
 * write(2). A terminal: one readable line per record, written at once.
 * Invariant: whatever is buffered is written out on shutdown and when the process exits, a crash
 * included (`process.on('exit')` runs for an uncaught exception and for process.exit); only
 * kill -9 loses the last lines (at most MIN_LENGTH bytes or FLUSH_INTERVAL_MS of them).
 * Tested: test/http/log-destination.test.ts.
 */
import { writeSync } from 'node:fs';
import pino, { type DestinationStream, type Logger } from 'pino';
import { loggerOptions } from './logging.js';

/** Bytes gathered before a write is started (under load, one write carries ~20 request lines). */
const MIN_LENGTH = 4096;
/** Bytes held at most while the terminal or pipe reads slower than requests arrive; past it lines are dropped and counted. */
const MAX_LENGTH = 16 * 1024 * 1024;
/** A quiet server's lines reach the output within this time. */
const FLUSH_INTERVAL_MS = 100;

interface ProcessLog {
  logger: Logger;
  /** Writes out whatever is buffered, synchronously (shutdown, exit). Never throws. */
  flush(): void;
  /** Lines dropped because the buffer was full. */
  readonly dropped: number;
  /** Flushes and stops listening for the process's exit (services.close). */
  close(): void;
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
/** Fields every record has, or that the readable form shows in its own place. */
const SHOWN = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'reqId', 'req', 'res', 'responseTime']);

function clockTime(epochMs: unknown): string {
  const date = new Date(typeof epochMs === 'number' ? epochMs : Date.now());
  return date.toISOString().slice(11, 23);
}

/**
 * One pino JSON record as one line for a person: `12:00:01.234 INFO  POST /api/… 204 1.2 ms req-1`
 * for a request, `12:00:01.234 WARN  message key=value …` for anything else. Secrets were redacted
 * before the record was serialised, so nothing here needs to know about them.
 */
export function prettyLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.trimEnd();
  }
  const level = LEVEL_NAMES[record['level'] as number] ?? String(record['level']);
  const parts = [clockTime(record['time']), level];
  const req = record['req'] as { method?: string; url?: string } | undefined;
  const res = record['res'] as { statusCode?: number } | undefined;
  if (record['msg'] === 'request completed' && req !== undefined && res !== undefined) {
    parts.push(`${req.method ?? ''} ${req.url ?? ''} ${String(res.statusCode)} ${String(record['responseTime'])} ms`);
  } else {
    if (typeof record['msg'] === 'string') parts.push(record['msg']);
    if (req !== undefined) parts.push(`${req.method ?? ''} ${req.url ?? ''}`);
  }
  for (const [key, value] of Object.entries(record)) {
    if (SHOWN.has(key)) continue;
    parts.push(`${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  if (typeof record['reqId'] === 'string') parts.push(record['reqId']);
  return parts.join(' ');
}

/** A terminal's destination: each record rewritten by prettyLine and written at once (a person is reading). */
function prettyDestination(fd: number): DestinationStream {
  return {
    write(chunk: string) {
      for (const json of chunk.split('\n')) {
        if (json !== '') writeSync(fd, `${prettyLine(json)}\n`);
      }
    },
  };
}

/**
 * The process logger at `level`: pretty when stdout is a terminal, else asynchronous JSON. Tests
 * pass `pretty` and `fd` instead of the guess and stdout.
 */
export function createProcessLog(level: string, options: { pretty?: boolean; fd?: number } = {}): ProcessLog {
  const fd = options.fd ?? 1;
  const pretty = options.pretty ?? process.stdout.isTTY === true;
  if (level === 'silent') return { logger: pino({ level }), flush: () => undefined, dropped: 0, close: () => undefined };
  if (pretty) {
    return { logger: pino(loggerOptions(level), prettyDestination(fd)), flush: () => undefined, dropped: 0, close: () => undefined };
  }
  const destination = pino.destination({ dest: fd, sync: false, minLength: MIN_LENGTH, maxLength: MAX_LENGTH });
  let dropped = 0;
  destination.on('drop', () => {
    dropped += 1;
  });
  // A reader that went away (EPIPE) must not become an unhandled 'error' event that ends the server.
  destination.on('error', () => undefined);
  // A flush of an empty buffer still sends a write to libuv's thread pool and wakes the event loop
  // for its completion: an idle server would do it ten times a second for nothing.
  let unflushed = false;
  const write = destination.write.bind(destination);
  destination.write = (chunk: string) => {
    unflushed = true;
    return write(chunk);
  };
  const timer = setInterval(() => {
    if (!unflushed) return;
    unflushed = false;
    try {
      destination.flush();
    } catch {
      // Not open yet: the next tick writes it.
    }
  }, FLUSH_INTERVAL_MS);
  timer.unref();
  const flush = () => {
    try {
      destination.flushSync();
    } catch {
      // Not open yet, or the reader went away: nothing more can be written.
    }
  };
  process.on('exit', flush);
  return {
    logger: pino(loggerOptions(level), destination),
    flush,
    get dropped() {
      return dropped;
    },
    close() {
      clearInterval(timer);
      flush();
      process.off('exit', flush);
    },
  };
}
