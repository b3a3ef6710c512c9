import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { connectRedis } from '../storage/redis.js';
import { MemoryChannelEvents, type ChannelEvent, type ChannelEvents, type ChannelListener } from './channel-events.js';
import { RedisOutbox } from './redis-outbox.js';

const TYPES = new Set<ChannelEvent['type']>(['message_create', 'message_update', 'message_delete', 'access_change', 'ephemeral_message']);
const ID = /^\d{1,20}$/;

/** How long a live view waits for Redis to confirm a subscription before it goes on without. */
const READY_TIMEOUT_MS = 2000;

/**
 * How long an instance's claim to watch a channel lasts unless renewed; it is renewed every third
 * of it while a view is open there, and withdrawn when the last one closes. An instance that died
 * keeps receiving (and ignoring) a channel's events for at most this long.
 */
const WATCH_TTL_MS = 60_000;

/**
 * KEYS[1]: a channel's watchers set (instance → expiry on Redis's clock). ARGV: origin, TTL ms
 * ('0' withdraws). Expired members go on the way.
 */
const WATCH_SCRIPT = `
local t = redis.call('TIME')
local clock = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
if ttl == 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', clock - 1)
redis.call('ZADD', KEYS[1], clock + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
`;

/** What travels through Redis: the event, and which instance sent it (it delivered it locally already). */
interface WireEvent extends ChannelEvent {
  origin: string;
}

function parseWire(text: string): WireEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const { type, channelId, messageId, origin } = v;
  if (typeof type !== 'string' || !TYPES.has(type as ChannelEvent['type'])) return undefined;
  if (typeof channelId !== 'string' || !ID.test(channelId) || typeof messageId !== 'string' || !ID.test(messageId)) return undefined;
  return { type: type as ChannelEvent['type'], channelId, messageId, origin: typeof origin === 'string' ? origin : '' };
}

/**
 * Channel events across instances (DESIGN §8: REDIS_URL fans live updates out to every instance).
 *
 * - One subscriber connection per instance; it SUBSCRIBEs to `gh:ch:<channelId>` while at least
 *   one view of that channel is open here and UNSUBSCRIBEs when the last one closes, so an
 *   instance receives only what its viewers need. ioredis re-subscribes after a reconnect.
 * - Messages are JSON `{type, channelId, messageId, origin}`: ids only, nothing secret.
 * - `publish` delivers to this instance's views at once and then publishes for the others, which
 *   ignore nothing but their own echo (`origin`). So when Redis is down, views on the same
 *   instance still update; the failure is logged once, and its recovery once. Events published
 *   elsewhere during an outage are not replayed by Redis; a browser that reconnects asks for what
 *   it missed (live.routes.ts, Last-Event-ID).
 * - Nobody watching elsewhere, nothing published (issue #26 §1): each instance with an open view
 *   of a channel keeps itself in the channel's watchers set (`gh:ch:w:<id>`, WATCH_TTL_MS), and the
 *   publish script (redis-outbox.ts) skips a channel whose set holds no other live instance. A
 *   view is ready once both its SUBSCRIBE and its place in the set are acknowledged, so every
 *   event published after that reaches it.
 * - Publishes ride along with the next bucket operation on the same connection when services.ts
 *   shares an outbox with the bucket store; otherwise they go in one script call within
 *   redis-outbox.ts's RIDE_WAIT_MS.
 */
export class RedisChannelEvents implements ChannelEvents {
  private readonly local = new MemoryChannelEvents();
  private readonly origin = randomBytes(9).toString('base64url');
  private readonly subscriptions = new Map<string, Promise<void>>();
  private degraded = false;
  private readonly outbox: RedisOutbox;
  private readonly watch: (key: string, origin: string, ttlMs: number) => Promise<unknown>;
  private readonly renewal: NodeJS.Timeout;

  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    private readonly prefix = 'gh:ch:',
    outbox?: RedisOutbox,
  ) {
    subscriber.on('message', (channel: string, message: string) => this.receive(channel, message));
    this.outbox = outbox ?? new RedisOutbox(publisher);
    this.outbox.onPublished = (error) => this.published(error);
    publisher.defineCommand('ghWatch', { numberOfKeys: 1, lua: WATCH_SCRIPT });
    const command = (publisher as unknown as { ghWatch: (key: string, origin: string, ttl: number) => Promise<unknown> }).ghWatch;
    this.watch = (key, origin, ttlMs) => command.call(publisher, key, origin, ttlMs);
    this.renewal = setInterval(() => this.renewWatches(), WATCH_TTL_MS / 3);
    this.renewal.unref();
    // Back from an outage: claim every watched channel again at once, not at the next renewal.
    publisher.on('ready', () => this.renewWatches());
  }

  private watchersKey(channelId: string): string {
    return `${this.prefix}w:${channelId}`;
  }

  private renewWatches(): void {
    for (const channelId of this.subscriptions.keys()) this.watch(this.watchersKey(channelId), this.origin, WATCH_TTL_MS).catch(() => undefined);
  }

  private published(error: unknown): void {
    if (error === undefined) {
      if (!this.degraded) return;
      this.degraded = false;
      this.logger.info('live updates are back on Redis');
      return;
    }
    if (this.degraded) return;
    this.degraded = true;
    this.logger.warn({ err: error }, 'Redis unreachable: live updates reach only the viewers on this instance');
  }

  private receive(channel: string, message: string): void {
    const event = parseWire(message);
    if (!event || event.origin === this.origin || this.prefix + event.channelId !== channel) return;
    this.local.publish({ type: event.type, channelId: event.channelId, messageId: event.messageId });
  }

  publish(event: ChannelEvent): void {
    this.local.publish(event);
    const wire: WireEvent = { type: event.type, channelId: event.channelId, messageId: event.messageId, origin: this.origin };
    this.outbox.publish(this.prefix + event.channelId, this.watchersKey(event.channelId), this.origin, JSON.stringify(wire));
  }

  subscribe(channelId: string, listener: ChannelListener): () => void {
    const key = this.prefix + channelId;
    if (this.local.listenerCount(channelId) === 0) {
      // Errors are the outage the publisher logs; ioredis subscribes again once reconnected.
      this.subscriptions.set(
        channelId,
        Promise.all([this.subscriber.subscribe(key), this.watch(this.watchersKey(channelId), this.origin, WATCH_TTL_MS)]).then(
          () => undefined,
          () => undefined,
        ),
      );
    }
    const off = this.local.subscribe(channelId, listener);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      off();
      if (this.local.listenerCount(channelId) === 0) {
        this.subscriptions.delete(channelId);
        this.subscriber.unsubscribe(key).catch(() => undefined);
        this.watch(this.watchersKey(channelId), this.origin, 0).catch(() => undefined);
      }
    };
  }

  ready(channelId: string): Promise<void> {
    const pending = this.subscriptions.get(channelId);
    if (!pending) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, READY_TIMEOUT_MS);
      timer.unref();
      void pending.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Views of a channel open on this instance. */
  listenerCount(channelId: string): number {
    return this.local.listenerCount(channelId);
  }

  /** True while the last publish failed (for tests and readiness checks). */
  get usingLocalOnly(): boolean {
    return this.degraded;
  }

  async close(): Promise<void> {
    clearInterval(this.renewal);
    this.subscriptions.clear();
    // Publishes still waiting for a bucket operation to carry them go out before the connection closes.
    await this.outbox.flush();
    await this.local.close();
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}

/**
 * Two connections to `url`: a publisher that fails fast while Redis is down (nobody waits on it),
 * and a subscriber that queues its SUBSCRIBEs and keeps reconnecting.
 */
export function createRedisChannelEvents(url: string, logger: Pick<Logger, 'warn' | 'info'>, prefix?: string, outbox?: RedisOutbox): RedisChannelEvents {
  const subscriber = new Redis(url, {
    maxRetriesPerRequest: null,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  // Connection errors surface through the publisher's single log line, not as unhandled events.
  subscriber.on('error', () => undefined);
  return new RedisChannelEvents(outbox?.client ?? connectRedis(url), subscriber, logger, prefix, outbox);
}
