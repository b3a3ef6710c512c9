import { EventEmitter } from 'node:events';

/**
 * What changed in a channel, for live views (server-sent events). Events carry ids only: a
 * subscriber loads what it shows, so nothing secret or large travels through the bus, and a
 * Redis fan-out (several instances) carries a few bytes per message.
 */
export interface ChannelEvent {
  type: 'message_create' | 'message_update' | 'message_delete' | 'access_change' | 'ephemeral_message';
  /**
   * The channel. For `access_change`, the topic whose access changed: a person's id (signed out,
   * removed from or left a server), a server's id (deleted, roles changed) or a channel's id
   * (deleted). For `ephemeral_message` (an app's message for one person: posted, edited or
   * deleted), that person's id: only their views hear it, and each looks up the message's channel.
   * Snowflakes are unique across tables, so topics never collide.
   */
  channelId: string;
  /** The message; `'0'` for `access_change`. */
  messageId: string;
}

/**
 * Tells every live view following `topicId` (a person, a server or a channel: see ChannelEvent)
 * to re-check its access now, so a stream ends at once instead of at its next heartbeat
 * (issue #21 §5: sign-out, removal, leaving, server deletion). A signal only: each view decides
 * from the database, so nothing is trusted from the bus.
 */
export function announceAccessChange(events: Pick<ChannelEvents, 'publish'>, topicId: string): void {
  events.publish({ type: 'access_change', channelId: topicId, messageId: '0' });
}

export type ChannelListener = (event: ChannelEvent) => void;

/** Publish/subscribe per channel. Memory by default; Redis pub/sub across instances. */
export interface ChannelEvents {
  publish(event: ChannelEvent): void;
  /** Returns the function that unsubscribes. */
  subscribe(channelId: string, listener: ChannelListener): () => void;
  /**
   * Resolves once events published by other instances for a channel subscribed to here reach
   * this instance (Redis: the SUBSCRIBE was acknowledged). Absent or immediate in memory.
   */
  ready?(channelId: string): Promise<void>;
  close(): Promise<void>;
}

/** One process: an EventEmitter keyed by channel id. */
export class MemoryChannelEvents implements ChannelEvents {
  private readonly emitter = new EventEmitter();

  constructor() {
    // One listener per open channel view; thousands of viewers are normal, not a leak.
    this.emitter.setMaxListeners(0);
  }

  publish(event: ChannelEvent): void {
    this.emitter.emit(event.channelId, event);
  }

  subscribe(channelId: string, listener: ChannelListener): () => void {
    this.emitter.on(channelId, listener);
    return () => this.emitter.off(channelId, listener);
  }

  /** How many listeners a channel has here (tests check that closed views unsubscribe). */
  listenerCount(channelId: string): number {
    return this.emitter.listenerCount(channelId);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
