import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { verifyKey, verifyKeyMiddleware } from 'discord-interactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE } from '../../src/core/clock.js';
import { DELIVERY_LOG_SIZE, insertDeliveries, listDeliveries } from '../../src/modules/app-events/app-events.repository.js';
import type { Delivery } from '../../src/modules/app-events/app-events.js';
import { callInteractionsEndpoint, deliverAppEvents } from '../../src/modules/app-events/app-events.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { given, type TestBot } from '../support/given.js';
import { csrfTokenIn, type PageAgent } from '../support/page-agent.js';
import { answerConsent, authorizePath, consentFields, location, requestFor } from './authorize.fixtures.js';

/**
 * Issue #40 §1–§3: what Gatehouse sends to apps, received by apps built on Discord's own
 * `discord-interactions` package, unmodified: the signed PING and bad-signature checks of an
 * interactions endpoint URL, the signed PING of an event webhooks URL, APPLICATION_AUTHORIZED and
 * APPLICATION_DEAUTHORIZED after a consent and a deauthorization, retries while a receiver is down
 * (the manual clock passes the minutes), and the refusal of private addresses without
 * GATEHOUSE_OUTBOUND_ALLOW_PRIVATE.
 */

interface Listening {
  url: string;
  close(): Promise<void>;
}

async function listen(app: express.Express, path: string): Promise<Listening> {
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}${path}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** An interactions endpoint as Discord's docs write it: verifyKeyMiddleware answers PINGs and refuses bad signatures. */
function interactionsApp(publicKey: string): express.Express {
  const app = express();
  app.post('/interactions', verifyKeyMiddleware(publicKey), (_req, res) => {
    res.json({ type: 4, data: { content: 'hello' } });
  });
  return app;
}

/** An endpoint that answers every PING without checking the signature: Discord's second check refuses it. */
function carelessApp(): express.Express {
  const app = express();
  app.post('/interactions', (_req, res) => {
    res.json({ type: 1 });
  });
  return app;
}

interface EventReceiver extends Listening {
  events: Array<{ type: string; timestamp: string; data: Record<string, unknown> }>;
  /** While true the receiver answers 503, as a server that is down behind its proxy. */
  down: boolean;
  badSignatures: number;
}

/** An event receiver checking every request with discord-interactions' verifyKey. */
async function eventReceiver(publicKey: () => string): Promise<EventReceiver> {
  const app = express();
  const receiver = { events: [], down: false, badSignatures: 0 } as unknown as EventReceiver;
  app.post('/events', express.raw({ type: 'application/json' }), async (req, res) => {
    const ok = await verifyKey(req.body as Buffer, req.header('X-Signature-Ed25519') ?? '', req.header('X-Signature-Timestamp') ?? '', publicKey());
    if (!ok) {
      receiver.badSignatures += 1;
      res.status(401).end();
      return;
    }
    if (receiver.down) {
      res.status(503).end();
      return;
    }
    const body = JSON.parse((req.body as Buffer).toString('utf8')) as { type: number; version: number; application_id: string; event?: EventReceiver['events'][number] };
    if (body.type === 1 && body.event) receiver.events.push(body.event);
    res.status(204).end();
  });
  const listening = await listen(app, '/events');
  return Object.assign(receiver, listening);
}

/** Delivers what is due and waits (with a ceiling that only catches a hang) until `done` holds. */
async function until(t: TestApp, done: () => boolean): Promise<void> {
  for (let round = 0; round < 100 && !done(); round += 1) {
    await deliverAppEvents(t.services, 'test worker');
    if (!done()) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(done()).toBe(true);
}

describe('app events and interactions endpoints (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE for loopback receivers)', () => {
  let t: TestApp;
  let owner: { agent: PageAgent; person: Person };
  let bot: TestBot;
  let verifyKeyHex: string;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    owner = await given.signedIn(t, { username: 'appmaker' });
    bot = await given.bot(t, { owner: owner.person, name: 'Listener' });
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
    verifyKeyHex = (me.json() as { verify_key: string }).verify_key;
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await t?.close();
  });

  const pagePath = () => `/developers/applications/${bot.client.app.id}/webhooks`;

  it('every app has an Ed25519 verify_key, the same on /applications/@me, /oauth2/applications/@me and the portal', async () => {
    expect(verifyKeyHex).toMatch(/^[0-9a-f]{64}$/);
    const oauth2 = await t.app.inject({ method: 'GET', url: '/api/v1/oauth2/applications/@me', headers: bot.headers });
    expect((oauth2.json() as { verify_key: string }).verify_key).toBe(verifyKeyHex);
    const page = await owner.agent.get(pagePath());
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(verifyKeyHex);
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
    expect(me.json()).toMatchObject({ interactions_endpoint_url: null, event_webhooks_url: null, event_webhooks_status: 1, event_webhooks_types: [] });
  });

  it('the portal keeps an interactions endpoint URL whose app (verifyKeyMiddleware) answers the signed PING and refuses the bad signature', async () => {
    const receiver = await listen(interactionsApp(verifyKeyHex), '/interactions');
    closers.push(receiver.close);
    const saved = await owner.agent.submit(pagePath(), `${pagePath()}/interactions`, { interactionsEndpointUrl: receiver.url });
    expect(saved.statusCode).toBe(303);
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
    expect((me.json() as { interactions_endpoint_url: string }).interactions_endpoint_url).toBe(receiver.url);
    const page = await owner.agent.get(pagePath());
    expect(page.body).toContain('Interactions URL check: PING (bad signature)');
  });

  it('an interaction sent to the verified endpoint is signed so verifyKeyMiddleware passes it on, and its answer comes back', async () => {
    const answer = await callInteractionsEndpoint(t.services, bot.client.app.id, JSON.stringify({ id: '1', application_id: bot.client.app.id, type: 2, token: 'tok', version: 1, data: { id: '2', name: 'hello', type: 1 } }));
    expect(answer).toMatchObject({ status: 200, failure: null });
    expect(JSON.parse(answer?.body.toString('utf8') ?? '')).toEqual({ type: 4, data: { content: 'hello' } });
  });

  it('someone else’s app: its Interactions and events page and forms are 404', async () => {
    const stranger = await given.signedIn(t);
    expect((await stranger.agent.get(pagePath())).statusCode).toBe(404);
    const own = await stranger.agent.get('/developers/applications');
    const posted = await stranger.agent.postRaw(`${pagePath()}/interactions`, { interactionsEndpointUrl: 'https://elsewhere.example/', _csrf: csrfTokenIn(own.body) as string });
    expect(posted.statusCode).toBe(404);
  });

  it('an endpoint that does not check signatures is refused, naming the bad-signature check, and nothing changes', async () => {
    const careless = await listen(carelessApp(), '/interactions');
    closers.push(careless.close);
    const before = await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
    const refused = await owner.agent.submit(pagePath(), `${pagePath()}/interactions`, { interactionsEndpointUrl: careless.url });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('The PING with a bad signature was answered 200, not 401');
    const api = await t.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { interactions_endpoint_url: careless.url } });
    expect(api.statusCode).toBe(400);
    expect(api.json()).toMatchObject({ code: 50035, errors: { interactions_endpoint_url: { _errors: [{ code: 'APPLICATION_INTERACTIONS_ENDPOINT_URL_INVALID' }] } } });
    const after = await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
    expect((after.json() as { interactions_endpoint_url: string }).interactions_endpoint_url).toBe((before.json() as { interactions_endpoint_url: string }).interactions_endpoint_url);
  });

  it('PATCH /applications/@me sets interactions_endpoint_url after the same checks, and a URL that answers nothing is refused', async () => {
    const receiver = await listen(interactionsApp(verifyKeyHex), '/interactions');
    const api = await t.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { interactions_endpoint_url: receiver.url } });
    expect(api.statusCode).toBe(200);
    expect((api.json() as { interactions_endpoint_url: string }).interactions_endpoint_url).toBe(receiver.url);
    await receiver.close();
    const gone = await t.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { interactions_endpoint_url: `${receiver.url}?again` } });
    expect(gone.statusCode).toBe(400);
    expect(JSON.stringify(gone.json())).toContain('The signed PING got no answer');
  });

  it('saving an endpoint URL is limited to 5 checks a minute per person (portal) and per app (API): the sixth is 429, says when to retry, and sends nothing', async () => {
    const maker = await given.signedIn(t, { username: 'busysaver' });
    const busy = await given.bot(t, { owner: maker.person, name: 'Busy' });
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: busy.headers });
    const key = (me.json() as { verify_key: string }).verify_key;
    let received = 0;
    const counting = express();
    counting.use((_req, _res, next) => {
      received += 1;
      next();
    });
    counting.use(interactionsApp(key));
    const receiver = await listen(counting, '/interactions');
    closers.push(receiver.close);
    const page = `/developers/applications/${busy.client.app.id}/webhooks`;

    for (let n = 1; n <= 5; n += 1) expect((await maker.agent.submit(page, `${page}/interactions`, { interactionsEndpointUrl: `${receiver.url}?n=${n}` })).statusCode).toBe(303);
    const sent = received;
    const refused = await maker.agent.submit(page, `${page}/interactions`, { interactionsEndpointUrl: `${receiver.url}?n=6` });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.body).toContain('An endpoint URL can be checked 5 times a minute');
    expect(received).toBe(sent);
    const kept = await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: busy.headers });
    expect((kept.json() as { interactions_endpoint_url: string }).interactions_endpoint_url).toBe(`${receiver.url}?n=5`);

    // The bot's own saves count for its app, apart from its owner's.
    for (let n = 7; n <= 11; n += 1) {
      const ok = await t.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: busy.headers, payload: { interactions_endpoint_url: `${receiver.url}?n=${n}` } });
      expect(ok.statusCode).toBe(200);
    }
    const limited = await t.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: busy.headers, payload: { interactions_endpoint_url: `${receiver.url}?n=12` } });
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ message: expect.stringContaining('5 times a minute'), retry_after: 60, global: false });

    t.clock.advance(MINUTE);
    expect((await maker.agent.submit(page, `${page}/interactions`, { interactionsEndpointUrl: `${receiver.url}?n=13` })).statusCode).toBe(303);
  });

  describe('app events', () => {
    let receiver: EventReceiver;
    beforeAll(async () => {
      receiver = await eventReceiver(() => verifyKeyHex);
      closers.push(receiver.close);
    });

    it('the event webhooks URL is kept when its signed PING is answered 204, with the events ticked', async () => {
      const saved = await owner.agent.submit(pagePath(), `${pagePath()}/events`, { eventWebhooksUrl: receiver.url, enabled: 'on', types: ['APPLICATION_AUTHORIZED', 'APPLICATION_DEAUTHORIZED'] });
      expect(saved.statusCode).toBe(303);
      const me = await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
      expect(me.json()).toMatchObject({ event_webhooks_url: receiver.url, event_webhooks_status: 2, event_webhooks_types: ['APPLICATION_AUTHORIZED', 'APPLICATION_DEAUTHORIZED'] });
      expect(receiver.badSignatures).toBe(0);
    });

    it('a receiver using verifyKey gets APPLICATION_AUTHORIZED after a consent and APPLICATION_DEAUTHORIZED after deauthorizing', async () => {
      const reader = await given.signedIn(t, { username: 'reader' });
      const app = { ...bot.client.app, redirectUris: [bot.client.redirectUri] };
      const consent = await answerConsent(reader.agent, authorizePath(requestFor(app, { scope: 'identify email', prompt: 'consent' })), 'authorize');
      expect(location(consent).searchParams.has('code')).toBe(true);
      await until(t, () => receiver.events.length >= 1);
      expect(receiver.events[0]).toMatchObject({ type: 'APPLICATION_AUTHORIZED', data: { user: { id: reader.person.id, username: 'reader' }, scopes: ['identify', 'email'] } });
      expect(receiver.events[0]?.data).not.toHaveProperty('integration_type');
      expect(Number.isNaN(Date.parse(receiver.events[0]?.timestamp ?? ''))).toBe(false);

      const settings = await reader.agent.get('/settings/authorized-apps');
      const removed = await reader.agent.postRaw(`/settings/authorized-apps/${app.id}/deauthorize`, { _csrf: csrfTokenIn(settings.body) as string });
      expect(removed.statusCode).toBe(303);
      await until(t, () => receiver.events.length >= 2);
      expect(receiver.events[1]).toMatchObject({ type: 'APPLICATION_DEAUTHORIZED', data: { user: { id: reader.person.id } } });
      expect(receiver.badSignatures).toBe(0);
    });

    it('a bot added to a server is APPLICATION_AUTHORIZED with integration_type 0 and the guild', async () => {
      const sam = await given.signedIn(t, { username: 'sam' });
      const server = await given.server(t, { owner: sam.person, name: 'Sherwood' });
      const start = receiver.events.length;
      const page = await sam.agent.get(authorizePath({ client_id: bot.client.app.id, scope: 'bot applications.commands', permissions: '2048', server_id: server.id }));
      expect(page.statusCode).toBe(200);
      const added = await sam.agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), permission: ['SEND_MESSAGES'], decision: 'authorize' });
      expect(added.statusCode).toBeLessThan(400);
      await until(t, () => receiver.events.length > start);
      expect(receiver.events[start]).toMatchObject({
        type: 'APPLICATION_AUTHORIZED',
        data: { integration_type: 0, user: { id: sam.person.id }, scopes: ['bot', 'applications.commands'], guild: { id: server.id, name: 'Sherwood' } },
      });
    });

    it('the app added to a person’s account is APPLICATION_AUTHORIZED with integration_type 1, and removing it is APPLICATION_DEAUTHORIZED', async () => {
      const ada = await given.signedIn(t, { username: 'ada' });
      const start = receiver.events.length;
      const page = await ada.agent.get(authorizePath({ client_id: bot.client.app.id, scope: 'applications.commands' }));
      expect(page.statusCode).toBe(200);
      const added = await ada.agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), decision: 'authorize' });
      expect(added.statusCode).toBeLessThan(400);
      await until(t, () => receiver.events.length > start);
      expect(receiver.events[start]).toMatchObject({ type: 'APPLICATION_AUTHORIZED', data: { integration_type: 1, user: { id: ada.person.id }, scopes: ['applications.commands'] } });
      expect(receiver.events[start]?.data).not.toHaveProperty('guild');

      const removePage = `/settings/apps/${bot.client.app.id}/remove`;
      const removed = await ada.agent.submit(removePage, removePage, {});
      expect(removed.statusCode).toBe(303);
      await until(t, () => receiver.events.length > start + 1);
      expect(receiver.events[start + 1]).toMatchObject({ type: 'APPLICATION_DEAUTHORIZED', data: { user: { id: ada.person.id } } });
    });

    it('a receiver that is down for five minutes receives every event once it is back', async () => {
      receiver.down = true;
      const start = receiver.events.length;
      const people = [await given.signedIn(t), await given.signedIn(t), await given.signedIn(t)];
      const app = { ...bot.client.app, redirectUris: [bot.client.redirectUri] };
      for (const p of people) await answerConsent(p.agent, authorizePath(requestFor(app, { scope: 'identify', prompt: 'consent' })), 'authorize');
      await deliverAppEvents(t.services, 'test worker');
      expect(receiver.events.length).toBe(start);
      const log = await owner.agent.get(pagePath());
      expect(log.body).toContain('Failed, will retry');
      expect(log.body).toContain('it answered 503, not 204');

      for (let minute = 0; minute < 5; minute += 1) {
        t.clock.advance(MINUTE);
        await deliverAppEvents(t.services, 'test worker');
      }
      expect(receiver.events.length).toBe(start);
      receiver.down = false;
      t.clock.advance(5 * MINUTE);
      await until(t, () => receiver.events.length >= start + 3);
      const users = receiver.events.slice(start).map((e) => (e.data['user'] as { id: string }).id).sort();
      expect(users).toEqual(people.map((p) => p.person.id).sort());
      expect(await t.services.db.selectFrom('app_event_outbox').select('id').execute()).toEqual([]);
    });

    it('an endpoint that keeps failing past the retry window is turned off, and its owner reads why', async () => {
      receiver.down = true;
      const someone = await given.signedIn(t);
      const app = { ...bot.client.app, redirectUris: [bot.client.redirectUri] };
      await answerConsent(someone.agent, authorizePath(requestFor(app, { scope: 'identify', prompt: 'consent' })), 'authorize');
      for (let minute = 0; minute <= 20; minute += 1) {
        await deliverAppEvents(t.services, 'test worker');
        t.clock.advance(MINUTE);
      }
      await deliverAppEvents(t.services, 'test worker');
      const me = await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
      expect((me.json() as { event_webhooks_status: number }).event_webhooks_status).toBe(3);
      const page = await owner.agent.get(pagePath());
      expect(page.body).toContain('Event webhooks are off.');
      expect(page.body).toContain('turned event webhooks off');
      expect(page.body).toContain('Dropped');
      expect(await t.services.db.selectFrom('app_event_outbox').select('id').execute()).toEqual([]);

      // Saving again checks the URL again and turns events back on.
      receiver.down = false;
      const saved = await owner.agent.submit(pagePath(), `${pagePath()}/events`, { eventWebhooksUrl: receiver.url, enabled: 'on', types: ['APPLICATION_AUTHORIZED', 'APPLICATION_DEAUTHORIZED'] });
      expect(saved.statusCode).toBe(303);
      const again = await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
      expect((again.json() as { event_webhooks_status: number }).event_webhooks_status).toBe(2);
    });

    it('a redirect is not followed: the check fails and says so', async () => {
      const mover = express();
      mover.post('/events', (_req, res) => {
        res.redirect(307, receiver.url);
      });
      const moved = await listen(mover, '/events');
      closers.push(moved.close);
      const refused = await t.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { event_webhooks_url: moved.url, event_webhooks_status: 2 } });
      expect(refused.statusCode).toBe(400);
      expect(JSON.stringify(refused.json())).toContain('it answered a redirect (307), which is not followed');
    });

    it('an event URL whose PING is not answered 204 is refused, and unknown event types are 50035', async () => {
      const other = express();
      other.post('/events', (_req, res) => {
        res.status(200).json({ ok: true });
      });
      const wrong = await listen(other, '/events');
      closers.push(wrong.close);
      const refused = await t.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { event_webhooks_url: wrong.url, event_webhooks_status: 2 } });
      expect(refused.statusCode).toBe(400);
      expect(JSON.stringify(refused.json())).toContain('The signed PING was answered 200, not 204.');
      const unknown = await t.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { event_webhooks_types: ['ENTITLEMENT_CREATE'] } });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json()).toMatchObject({ code: 50035, errors: { event_webhooks_types: { _errors: [{ code: 'BASE_TYPE_CHOICES' }] } } });
    });
  });
  it("the delivery log keeps each app's last 100 entries when entries of several apps are written in batches", async () => {
    const other = await given.bot(t, { owner: owner.person, name: 'Log neighbour' });
    const entry = (applicationId: string, n: number): Delivery => ({ id: t.services.ids.next(), applicationId, kind: 'event', eventType: `E${n}`, outcome: 'delivered', httpStatus: 204, latencyMs: 1, nextRetryAt: null, error: null, createdAt: n });
    const written: Delivery[] = [];
    for (const size of [60, 1, 70]) {
      const batch = Array.from({ length: size }, (_, i) => entry(other.client.app.id, written.length + i));
      batch.push(entry(bot.client.app.id, written.length));
      written.push(...batch.filter((e) => e.applicationId === other.client.app.id));
      await insertDeliveries(t.services.db, batch);
    }
    const kept = await listDeliveries(t.services.db, other.client.app.id, 1000);
    expect(kept).toHaveLength(DELIVERY_LOG_SIZE);
    expect(kept.map((d) => d.id)).toEqual(written.slice(-DELIVERY_LOG_SIZE).map((d) => d.id).reverse());
    // The other app's own entries are counted apart: all of its few are still there.
    const mine = await listDeliveries(t.services.db, bot.client.app.id, 1000);
    expect(mine.filter((d) => d.eventType !== null && /^E\d+$/.test(d.eventType))).toHaveLength(3);
  });
});

describe('outbound requests to apps without GATEHOUSE_OUTBOUND_ALLOW_PRIVATE', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('a loopback or private endpoint URL is refused with the reason, and plain http is refused', async () => {
    const bot = await given.bot(t);
    for (const url of ['https://127.0.0.1:9/interactions', 'https://10.0.0.8/interactions', 'https://[::1]/interactions']) {
      const refused = await t.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { interactions_endpoint_url: url } });
      expect(refused.statusCode).toBe(400);
      expect(JSON.stringify(refused.json())).toContain('its address is not public');
    }
    const http = await t.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { event_webhooks_url: 'http://events.example/e', event_webhooks_status: 2 } });
    expect(http.statusCode).toBe(400);
    expect(JSON.stringify(http.json())).toContain('The URL must start with https://.');
  });
});
