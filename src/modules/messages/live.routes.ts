import type { ServerResponse } from 'node:http';
import { Counter, Gauge } from 'prom-client';
import { PageError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import type { ChannelEvent } from '../../realtime/channel-events.js';
import { OpenStreams, type StreamRefusal } from '../../realtime/stream-caps.js';
import { StreamOutboxes } from '../../realtime/stream-outbox.js';
import type { Services } from '../../deps.js';
import type { Channel } from '../directory/channels.js';
import { addressBlock } from '../accounts/sign-in-throttle.js';
import { BEHIND_EVENT, END_EVENT, KEEP_ALIVE, LiveFrames } from './live.page.js';
import type { LiveUpdate } from './live.js';
import { LiveParams, LiveQuery } from './live.schemas.js';
import { ephemeralUpdate, liveUpdate, mayStillFollow, messagesAfter, requireLiveChannel } from './live.service.js';
import { ephemeralViews } from './messages.service.js';
import { rightsIn } from './message-actions.service.js';
import type { MessageRights } from './message-rights.js';
import { person } from '../../core/actor.js';

/** A comment line every 25 s keeps proxies and load balancers from closing an idle stream. */
export const HEARTBEAT_MS = 25_000;
/** How long a browser waits before reconnecting after the stream drops. */
const RETRY_MS = 3_000;
/**
 * Issue #36 §1: how long an update waits for others before its streams are written, so a stream
 * gets the events of this window in one write (one system call) rather than one each. The bound
 * on how late a live update reaches a viewer, besides a flush split over turns (docs/channel-view.md).
 */
export const LIVE_FLUSH_MS = 25;
/** Streams written per turn of the event loop: requests are answered between chunks of a large fan-out. */
export const LIVE_FLUSH_STREAMS_PER_TURN = 100;
/** Bytes a stream may hold unread (about 200 largest messages) before it is ended with `behind`. */
export const LIVE_MAX_UNREAD_BYTES = 1024 * 1024;
/** How long a stream ended with `behind` may take to read it before its connection is cut. */
const LIVE_ABANDON_MS = 30_000;

/** Issue #36 §1: the answer to a stream beyond a cap; live.js shows a notice with Reconnect. */
function refused(cap: StreamRefusal, limit: number): PageError {
  return cap === 'person'
    ? new PageError(429, 'Too many live views', `You already follow ${limit} conversations live. Close a tab or window showing one, then reconnect.`)
    : new PageError(429, 'Too many live views', `Your network already follows ${limit} conversations live. Close some, then reconnect.`);
}

/** A stream's place in line: ready once its update is loaded; `run` writes it (nothing to write: none). */
interface Slot {
  ready: boolean;
  run: (() => void) | undefined;
}

/**
 * Issue #36 §1: every stream of a channel on this instance receives the same event object, so one
 * wait on its load calls back all of them, rather than each stream awaiting a promise of its own
 * (with 1,000 streams, promises per stream and event were a large part of the fan-out's CPU).
 */
class SharedLoads {
  private readonly waiting = new WeakMap<ChannelEvent, Array<(update: LiveUpdate | undefined) => void>>();

  constructor(
    private readonly services: Services,
    private readonly log: { warn(details: object, message: string): void },
  ) {}

  /** Calls `deliver` with the event's update once loaded (undefined when the load failed). */
  wait(event: ChannelEvent, deliver: (update: LiveUpdate | undefined) => void): void {
    let waiters = this.waiting.get(event);
    if (!waiters) {
      const list: Array<(update: LiveUpdate | undefined) => void> = [];
      waiters = list;
      this.waiting.set(event, list);
      liveUpdate(this.services, event).then(
        (update) => {
          this.waiting.delete(event);
          for (const waiter of list) waiter(update);
        },
        (error: unknown) => {
          this.waiting.delete(event);
          this.log.warn({ err: error }, 'live update failed');
          for (const waiter of list) waiter(undefined);
        },
      );
    }
    waiters.push(deliver);
  }
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
 *
 * Issue #36 §1: one event is loaded and rendered once for all the streams of its channel on this
 * instance (LiveFrames); a stream only adds its reader's Edit and Delete. A person may hold
 * `liveStreamsPerPerson` streams open here and an address (IPv6 by /64) `liveStreamsPerAddress`;
 * one more is answered 429 before anything is subscribed. Streams are written in batches
 * (StreamOutboxes: at most LIVE_FLUSH_MS late, LIVE_FLUSH_STREAMS_PER_TURN streams per turn), and
 * a stream whose reader is LIVE_MAX_UNREAD_BYTES behind gets `behind` and is ended.
 */
export function registerLivePages(pages: App, services: Services, options: { heartbeatMs?: number; maxUnreadBytes?: number } = {}): void {
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const open = new Set<ServerResponse>();
  const places = new OpenStreams({ perPerson: services.config.liveStreamsPerPerson, perAddress: services.config.liveStreamsPerAddress });
  const registers = [services.metrics.registry];
  const renders = new Counter({ name: 'live_message_renders_total', help: 'Messages rendered for live channel views: one per event however many streams follow the channel, plus the catch-up of a connecting stream.', registers });
  const openGauge = new Gauge({ name: 'live_streams_open', help: 'Live channel view streams open on this instance.', registers });
  const refusals = new Counter({ name: 'live_streams_refused_total', help: 'Live streams refused by a cap (GATEHOUSE_LIVE_STREAMS_PER_PERSON, _PER_ADDRESS), by cap.', labelNames: ['cap'], registers });
  const behind = new Counter({ name: 'live_streams_behind_total', help: 'Live streams ended because their reader fell more than the unread-bytes limit behind.', registers });
  const frames = new LiveFrames(() => renders.inc());
  const loaded = new SharedLoads(services, pages.log);
  const outboxes = new StreamOutboxes({
    windowMs: LIVE_FLUSH_MS,
    perTurn: LIVE_FLUSH_STREAMS_PER_TURN,
    maxBuffered: options.maxUnreadBytes ?? LIVE_MAX_UNREAD_BYTES,
    overflowEvent: BEHIND_EVENT,
    abandonMs: LIVE_ABANDON_MS,
    onOverflow: () => behind.inc(),
  });

  pages.addHook('preClose', async () => {
    for (const response of open) response.end();
  });

  pages.get('/channels/:channelId/events', { schema: { hide: true, params: LiveParams, querystring: LiveQuery } }, async (request, reply) => {
    const viewer = request.viewer;
    const sessionToken = request.sessionToken;
    // EventSource does not follow a sign-in redirect usefully; a non-200 answer stops it instead.
    if (!viewer || !sessionToken) throw new PageError(401, 'Sign in required', 'Sign in to follow this channel.');
    // Taken before any await, so streams opened at the same moment cannot all take the last place.
    const place = places.open(viewer.id, addressBlock(request.ip));
    if (typeof place === 'string') {
      refusals.inc({ cap: place });
      throw refused(place, place === 'person' ? places.caps.perPerson : places.caps.perAddress);
    }
    let channel: Channel;
    let rights: MessageRights;
    try {
      channel = await requireLiveChannel(services, viewer.id, request.params.channelId);
      // Re-read on every access change below: a moderator whose role is taken away stops being offered Delete.
      rights = await rightsIn(services, person(viewer.id), channel);
    } catch (error) {
      place.release();
      throw error;
    }
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
    openGauge.inc();
    const outbox = outboxes.open(response);

    let closed = false;
    // Set when access ended: nothing more is written but the `end` event itself.
    let ending = false;
    // Updates are written in the order events arrived, whatever order their loads finish in: each
    // takes its place in line at once, and runs when every place before it has run.
    const line: Slot[] = [];
    const drain = () => {
      while (line[0]?.ready) {
        const run = (line.shift() as Slot).run;
        if (closed || ending || !run) continue;
        try {
          run();
        } catch (error) {
          request.log.warn({ err: error }, 'live update failed');
        }
      }
    };
    const takePlace = (): ((run?: () => void) => void) => {
      const slot: Slot = { ready: false, run: undefined };
      line.push(slot);
      return (run) => {
        slot.ready = true;
        slot.run = run;
        drain();
      };
    };
    /** This stream's own loads (access re-checks, catch-up), in line with the channel's events. */
    const enqueue = (work: () => Promise<(() => void) | undefined>) => {
      if (closed || ending) return;
      const fill = takePlace();
      work().then(fill, (error: unknown) => {
        request.log.warn({ err: error }, 'live update failed');
        fill();
      });
    };
    const end = () => {
      ending = true;
      outbox.end(END_EVENT);
    };

    /** Ends the stream when the viewer may no longer follow the channel (signed out, removed…). */
    const recheck = () => {
      enqueue(async () => {
        if (!(await mayStillFollow(services, sessionToken, viewer.id, channel.id))) return end;
        const fresh = await rightsIn(services, person(viewer.id), channel);
        return () => {
          rights = fresh;
        };
      });
    };

    // Issue #21 §5: besides the channel's own events, its server's and the viewer's access
    // changes (`access.changed` events) make the stream re-check at once rather than at the next
    // heartbeat, so a signed-out, removed or departed viewer receives nothing more.
    const unsubscribers = [
      services.events.subscribe(channel.id, (event: ChannelEvent) => {
        if (event.type === 'access_change') return recheck();
        if (closed || ending) return;
        const fill = takePlace();
        loaded.wait(event, (update) => fill(update && (() => outbox.send(frames.frame(update, rights)))));
      }),
      // Issue #40 §2: the viewer's own topic also carries their ephemeral messages (any channel's).
      services.events.subscribe(viewer.id, (event: ChannelEvent) => {
        if (event.type !== 'ephemeral_message') return recheck();
        enqueue(async () => {
          const update = await ephemeralUpdate(services, viewer.id, channel.id, event.messageId);
          return update && (() => outbox.send(update.kind === 'message' ? frames.ephemeral([update.message], rights) : frames.frame(update, rights)));
        });
      }),
      ...(channel.serverId !== null ? [services.events.subscribe(channel.serverId, recheck)] : []),
    ];
    const heartbeat = setInterval(() => {
      enqueue(async () => ((await mayStillFollow(services, sessionToken, viewer.id, channel.id)) ? () => outbox.send(KEEP_ALIVE) : end));
    }, heartbeatMs);
    heartbeat.unref();

    const release = () => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      for (const unsubscribe of unsubscribers) unsubscribe();
      outbox.discard();
      if (open.delete(response)) openGauge.dec();
      place.release();
      // The browser went away mid-stream: the server keeps a half-closed socket open until its
      // response ends, which would hold up shutdown; release it now.
      if (!response.writableEnded) response.destroy();
    };
    response.on('close', release);
    // A browser that left while access was checked above closed its response before the listener
    // existed: without this its place under the caps and its subscriptions would stay taken.
    if (response.destroyed) release();

    // Subscribed first, then caught up: nothing posted in between is missed (a duplicate is
    // harmless, the page replaces a message with the same id).
    enqueue(async () => {
      await Promise.all([services.events.ready?.(channel.id), services.events.ready?.(viewer.id)]);
      // The viewer's kept ephemeral messages too (issue #40 §2): one filled or edited between the
      // page's load and this subscription is not missed (the page replaces the same id).
      const [missed, mine] = await Promise.all([after === '' ? [] : messagesAfter(services, channel.id, after), ephemeralViews(services, viewer.id, channel.id)]);
      return () => {
        if (missed.length > 0) outbox.send(frames.missed(missed, rights));
        if (mine.length > 0) outbox.send(frames.ephemeral(mine, rights));
      };
    });
  });
}
