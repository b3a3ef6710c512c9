import { Redis } from 'ioredis';

/**
 * The Redis connection that rate limits (rate-limit/redis-store.ts) and live updates
 * (realtime/redis-channel-events.ts) share the settings of: Redis is never waited on by a request
 * (docs/operations.md, docs/reliability.md).
 */

/**
 * A client that fails fast instead of queueing while Redis is down (no request waits on it),
 * and keeps reconnecting in the background.
 */
export function connectRedis(url: string): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    commandTimeout: 1000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: false,
    // The commands of one event-loop turn (the bucket takes of the executes it delivered) leave in
    // one socket write and their replies come back in one read: one write per command was a fifth
    // of the server's CPU on execute (docs/performance.md §PostgreSQL and Redis round trips). Each
    // command still runs alone on Redis, so no rule changes.
    enableAutoPipelining: true,
  });
  // Connection errors are reported through the store's fallback log, not as unhandled events.
  client.on('error', () => undefined);
  return client;
}

/**
 * Whether Redis answers a PING now (for /readyz). Never throws and never waits long: the client
 * of `connectRedis` refuses at once while disconnected and times a command out after 1 s.
 */
export function redisAnswers(client: Redis): Promise<boolean> {
  return client.ping().then(
    () => true,
    () => false,
  );
}

/**
 * Resolves once the client is connected, or after `timeoutMs` either way: start-up waits briefly
 * for Redis but never fails because of it (the resilient store covers an outage).
 */
export function waitUntilReady(client: Redis, timeoutMs = 2000): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    client.once('ready', onReady);
  });
}
