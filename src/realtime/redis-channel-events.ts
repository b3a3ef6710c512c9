import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { connectRedis } from '../storage/redis.js';
import { MemoryChannelEvents, type ChannelEvent, type ChannelEvents, type ChannelListener } from './channel-events.js';

const TYPES = new Set<ChannelEvent['type']>(['message_create', 'message_update', 'message_delete', 'access_change']);
const ID = /^\d{1,20}$/;

/** How long a live view waits for Redis to confirm a subscription before it goes on without. */
const READY_TIMEOUT_MS = 2000;

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
 */
export class RedisChannelEvents implements ChannelEvents {
  private readonly local = new MemoryChannelEvents();
  private readonly origin = randomBytes(9).toString('base64url');
  private readonly subscriptions = new Map<string, Promise<void>>();
  private degraded = false;

  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    private readonly prefix = 'gh:ch:',
  ) {
    subscriber.on('message', (channel: string, message: string) => this.receive(channel, message));
  }

  private receive(channel: string, message: string): void {
    const event = parseWire(message);
    if (!event || event.origin === this.origin || this.prefix + event.channelId !== channel) return;
    this.local.publish({ type: event.type, channelId: event.channelId, messageId: event.messageId });
  }

  publish(event: ChannelEvent): void {
    this.local.publish(event);
    const wire: WireEvent = { type: event.type, channelId: event.channelId, messageId: event.messageId, origin: this.origin };
    this.publisher.publish(this.prefix + event.channelId, JSON.stringify(wire)).then(
      () => {
        if (!this.degraded) return;
        this.degraded = false;
        this.logger.info('live updates are back on Redis');
      },
      (error: unknown) => {
        if (this.degraded) return;
        this.degraded = true;
        this.logger.warn({ err: error }, 'Redis unreachable: live updates reach only the viewers on this instance');
      },
    );
  }

  subscribe(channelId: string, listener: ChannelListener): () => void {
    const key = this.prefix + channelId;
    if (this.local.listenerCount(channelId) === 0) {
      // Errors are the outage the publisher logs; ioredis subscribes again once reconnected.
      this.subscriptions.set(
        channelId,
        this.subscriber.subscribe(key).then(
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
    this.subscriptions.clear();
    await this.local.close();
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}

/**
 * Two connections to `url`: a publisher that fails fast while Redis is down (nobody waits on it),
 * and a subscriber that queues its SUBSCRIBEs and keeps reconnecting.
 */
export function createRedisChannelEvents(url: string, logger: Pick<Logger, 'warn' | 'info'>, prefix?: string): RedisChannelEvents {
  const subscriber = new Redis(url, {
    maxRetriesPerRequest: null,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  // Connection errors surface through the publisher's single log line, not as unhandled events.
  subscriber.on('error', () => undefined);
  return new RedisChannelEvents(connectRedis(url), subscriber, logger, prefix);
}
