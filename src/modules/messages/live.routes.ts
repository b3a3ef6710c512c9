import type { ServerResponse } from 'node:http';
import { PageError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import type { ChannelEvent } from '../../realtime/channel-events.js';
import type { Services } from '../../deps.js';
import { LiveParams, LiveQuery } from './live.schemas.js';
import { liveUpdate, mayStillFollow, messagesAfter, requireLiveChannel, type LiveUpdate } from './live.service.js';
import { messageItem } from './message-list.page.js';
import { rightsIn } from './message-actions.service.js';
import type { MessageRights } from './message-rights.js';
import { person } from '../../core/actor.js';

/** A comment line every 25 s keeps proxies and load balancers from closing an idle stream. */
export const HEARTBEAT_MS = 25_000;
/** How long a browser waits before reconnecting after the stream drops. */
const RETRY_MS = 3_000;

/** One server-sent event; every line of `data` gets its own `data:` field (WHATWG HTML §9.2.6). */
export function sseEvent(event: string, data: string, id?: string): string {
  const lines = data.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`);
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\n${lines.join('')}\n`;
}

/** `rights`: the viewer's Edit and Delete on each message (message-actions.page.ts), as on their page. */
function frame(update: LiveUpdate, rights: MessageRights): string {
  if (update.kind === 'delete') return sseEvent('delete', update.messageId);
  // Only creations carry an id: Last-Event-ID then names the newest message this browser has.
  return sseEvent('message', messageItem(update.message, { rights }).value, update.created ? update.message.id : undefined);
}

/**
 * GET /channels/:channelId/events: the channel view's live updates as server-sent events (pages
 * context: the signed-in viewer's session cookie). Only people who may read the channel get a
 * stream; others get the channel view's 404. Events:
 *   `message` — the rendered <li> of a created or edited message (id: the message id when created),
 *               with the viewer's own Edit/Delete links; an edit replaces the <li> in place;
 *   `delete`  — the id of a removed message (deleted by its author or with Manage messages);
 *   `end`     — access ended (signed out, removed from or left the server, server or channel
 *               deleted): the page stops listening. Sent at once on those changes (an
 *               `access_change` on the bus), and at the latest at the next heartbeat.
 * A reconnecting browser sends Last-Event-ID (or a fresh page sends ?after=) and first receives
 * what was posted since. The stream unsubscribes when the connection closes, and every open
 * stream is ended when the server shuts down so shutdown is not held up; browsers reconnect.
 */
export function registerLivePages(pages: App, services: Services, options: { heartbeatMs?: number } = {}): void {
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const open = new Set<ServerResponse>();

  pages.addHook('preClose', async () => {
    for (const response of open) response.end();
  });

  pages.get('/channels/:channelId/events', { schema: { hide: true, params: LiveParams, querystring: LiveQuery } }, async (request, reply) => {
    const viewer = request.viewer;
    const sessionToken = request.sessionToken;
    // EventSource does not follow a sign-in redirect usefully; a non-200 answer stops it instead.
    if (!viewer || !sessionToken) throw new PageError(401, 'Sign in required', 'Sign in to follow this channel.');
    const channel = await requireLiveChannel(services, viewer.id, request.params.channelId);
    // Re-read on every access change below: a moderator whose role is taken away stops being offered Delete.
    let rights = await rightsIn(services, person(viewer.id), channel);
    const lastEventId = request.headers['last-event-id'];
    const after = (typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : request.query.after) ?? '';

    reply.hijack();
    const response = reply.raw;
    // The security headers set so far (CSP, nosniff …) go out with the stream.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store, no-transform',
      // nginx and similar proxies would otherwise buffer the stream.
      'x-accel-buffering': 'no',
      'x-request-id': request.id,
    });
    response.write(`retry: ${RETRY_MS}\n\n`);
    open.add(response);

    let closed = false;
    // Set when access ended: nothing more is written but the `end` event itself.
    let ending = false;
    // Updates are written in the order events arrived, whatever order their loads finish in.
    let queue: Promise<void> = Promise.resolve();
    const enqueue = (work: () => Promise<string | undefined>) => {
      queue = queue.then(async () => {
        if (closed || ending) return;
        try {
          const text = await work();
          if (text !== undefined && !closed) response.write(text);
        } catch (error) {
          request.log.warn({ err: error }, 'live update failed');
        }
      });
    };

    /** Ends the stream when the viewer may no longer follow the channel (signed out, removed…). */
    const recheck = () => {
      enqueue(async () => {
        if (await mayStillFollow(services, sessionToken, viewer.id, channel.id)) {
          rights = await rightsIn(services, person(viewer.id), channel);
          return undefined;
        }
        ending = true;
        setImmediate(() => response.end());
        return sseEvent('end', 'access ended');
      });
    };

    // Issue #21 §5: besides the channel's own events, its server's and the viewer's access
    // changes (announceAccessChange) make the stream re-check at once rather than at the next
    // heartbeat, so a signed-out, removed or departed viewer receives nothing more.
    const unsubscribers = [
      services.events.subscribe(channel.id, (event: ChannelEvent) => {
        if (event.type === 'access_change') recheck();
        else enqueue(async () => frame(await liveUpdate(services, event), rights));
      }),
      services.events.subscribe(viewer.id, recheck),
      ...(channel.serverId !== null ? [services.events.subscribe(channel.serverId, recheck)] : []),
    ];
    const heartbeat = setInterval(() => {
      enqueue(async () => {
        if (await mayStillFollow(services, sessionToken, viewer.id, channel.id)) return ': keep-alive\n\n';
        ending = true;
        setImmediate(() => response.end());
        return sseEvent('end', 'access ended');
      });
    }, heartbeatMs);
    heartbeat.unref();

    response.on('close', () => {
      closed = true;
      clearInterval(heartbeat);
      for (const unsubscribe of unsubscribers) unsubscribe();
      open.delete(response);
      // The browser went away mid-stream: the server keeps a half-closed socket open until its
      // response ends, which would hold up shutdown; release it now.
      if (!response.writableEnded) response.destroy();
    });

    // Subscribed first, then caught up: nothing posted in between is missed (a duplicate is
    // harmless, the page replaces a message with the same id).
    enqueue(async () => {
      await services.events.ready?.(channel.id);
      if (after === '') return undefined;
      const missed = await messagesAfter(services, channel.id, after);
      return missed.map((message) => frame({ kind: 'message', created: true, message }, rights)).join('');
    });
  });
}
