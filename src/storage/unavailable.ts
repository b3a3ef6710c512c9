/**
 * Whether an error means "the database cannot be reached right now" rather than "this request or
 * this code is wrong" (issue #7 §4). The error handler answers these with 503 and Retry-After
 * instead of a 500, and the service recovers by itself: the pool opens new connections once the
 * database answers again.
 *
 * How an outage surfaces, by the moment it hits (checked against a PostgreSQL stopped with
 * `pg_ctl stop -m fast` and killed with SIGKILL; test/reliability/dependency-faults.test.ts):
 * - a connection being opened: a socket error (`ECONNREFUSED`, `ECONNRESET`, `ETIMEDOUT`,
 *   `EHOSTUNREACH`…, possibly inside an AggregateError when several addresses were tried), or
 *   pg-pool's "timeout exceeded when trying to connect" after `connectionTimeoutMillis`;
 * - a query in flight: the server's FATAL 57P01 (admin shutdown), 57P02 (crash shutdown) or
 *   57P03 (cannot connect now: starting up or shutting down), any SQLSTATE class 08 (connection
 *   exception), 53300 (too many connections), or "Connection terminated unexpectedly" when the
 *   socket closes without a word;
 * - a later query on a connection already cut (inside a transaction): "Client has encountered a
 *   connection error and is not queryable";
 * - SQLite: SQLITE_BUSY after its 5 s busy timeout (another writer holds the lock).
 */
import { UnacknowledgedChangeError } from './coherence.js';

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const PG_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'is not queryable',
  'Client was closed',
];

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  // Committed, but the other instances could not be told before answering (storage/coherence.ts).
  if (error instanceof UnacknowledgedChangeError) return true;
  const { code, message, errors, cause } = error as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT') return true;
  }
  if (typeof message === 'string' && PG_MESSAGES.some((text) => message.includes(text))) return true;
  if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return cause !== undefined && isDatabaseUnavailable(cause, depth + 1);
}
