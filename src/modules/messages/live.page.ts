import type { LiveUpdate } from './live.js';
import { sharedMessageItem, withActions, type SharedMessageItem } from './message-list.page.js';
import { mayDelete, mayEdit, type MessageRights } from './message-rights.js';
import type { MessageView } from './messages.js';

/**
 * What live channel views write (live.routes.ts): server-sent events carrying rendered messages.
 * Issue #36 §1: a message is rendered once per event, however many streams watch its channel,
 * and each stream only picks its reader's variant (with or without Edit and Delete) and writes it.
 */

/** One server-sent event; every line of `data` gets its own `data:` field (WHATWG HTML §9.2.6). */
export function sseEvent(event: string, data: string, id?: string): string {
  const lines = data.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`);
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\n${lines.join('')}\n`;
}

/** A comment line that keeps proxies from closing an idle stream. */
export const KEEP_ALIVE = Buffer.from(': keep-alive\n\n');
/** Access ended (signed out, removed…): the page stops listening. */
export const END_EVENT = Buffer.from(sseEvent('end', 'access ended'));
/**
 * Issue #36 §1: the stream fell too far behind its events (a slow reader, stream-outbox.ts) and is
 * ended; the page tells its reader to reload, since what it missed is not replayed.
 */
export const BEHIND_EVENT = Buffer.from(sseEvent('behind', 'live updates fell behind'));

/** A message rendered once, and its finished events by the actions a reader is offered. */
interface Rendered {
  item: SharedMessageItem;
  /**
   * Keyed by actionsKey: at most three variants (none, Delete, Edit and Delete) per message, each
   * encoded once, so every stream writes the same bytes rather than encoding a string itself.
   */
  frames: Map<number, Buffer>;
}

/** Edit and Delete are all that differ between readers (message-actions.page.ts decides from these two). */
function actionsKey(rights: MessageRights, message: MessageView): number {
  return (mayEdit(rights, message) ? 1 : 0) | (mayDelete(rights, message) ? 2 : 0);
}

/**
 * The events of live updates for one app. `onRender` is called whenever a message's markup is
 * rendered (Markdown, embeds), so /metrics shows that one event costs one rendering.
 */
export class LiveFrames {
  /**
   * Every stream of a channel on this instance receives the same LiveUpdate object for one
   * event (live.service.ts liveUpdate), so it keys the shared rendering; it goes with the update.
   */
  private readonly rendered = new WeakMap<LiveUpdate, Rendered>();
  private readonly removals = new WeakMap<LiveUpdate, Buffer>();

  constructor(private readonly onRender: () => void = () => undefined) {}

  /** The event a stream writes for `update`, with its reader's Edit and Delete. */
  frame(update: LiveUpdate, rights: MessageRights): Buffer {
    if (update.kind === 'delete') {
      let removal = this.removals.get(update);
      if (!removal) {
        removal = Buffer.from(sseEvent('delete', update.messageId));
        this.removals.set(update, removal);
      }
      return removal;
    }
    let shared = this.rendered.get(update);
    if (!shared) {
      shared = { item: this.render(update.message), frames: new Map() };
      this.rendered.set(update, shared);
    }
    const key = actionsKey(rights, update.message);
    let bytes = shared.frames.get(key);
    if (bytes === undefined) {
      // Only creations carry an id: Last-Event-ID then names the newest message this browser has.
      bytes = Buffer.from(sseEvent('message', withActions(shared.item, rights).value, update.created ? update.message.id : undefined));
      shared.frames.set(key, bytes);
    }
    return bytes;
  }

  /** What a page that connects late missed (loaded for this stream alone, so rendered for it). */
  missed(messages: readonly MessageView[], rights: MessageRights): Buffer {
    return Buffer.from(messages.map((message) => sseEvent('message', withActions(this.render(message), rights).value, message.id)).join(''));
  }

  /**
   * Issue #40 §2: the reader's ephemeral messages, rendered for this stream alone and sent without
   * an `id:`, so Last-Event-ID only ever names a message of the channel's history.
   */
  ephemeral(messages: readonly MessageView[], rights: MessageRights): Buffer {
    return Buffer.from(messages.map((message) => sseEvent('message', withActions(this.render(message), rights).value)).join(''));
  }

  private render(message: MessageView): SharedMessageItem {
    this.onRender();
    return sharedMessageItem(message);
  }
}
