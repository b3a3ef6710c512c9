import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { verifyKey } from 'discord-interactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverAppEvents } from '../../src/modules/app-events/app-events.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/database.js';
import { given, type TestBot } from '../support/given.js';
import { answerConsent, authorizePath, requestFor } from './authorize.fixtures.js';

/**
 * Issue #40 §1: with several instances on one PostgreSQL database, each app event is delivered
 * once. Both instances' own workers run, and both are also made to deliver at the same moment; the
 * claim's FOR UPDATE SKIP LOCKED and the lease (storage/outbox.ts) keep an event to one sender.
 * SQLite has one instance.
 */
const canRun = Boolean(TEST_DATABASE_URL);
if (!canRun) console.log('app-events-instances: skipped: two instances need one shared database, TEST_DATABASE_URL (PostgreSQL)');

describe.skipIf(!canRun)('app events with two instances on one PostgreSQL database', () => {
  let a: TestApp;
  let b: TestApp;
  let bot: TestBot;
  let server: Server;
  const received: string[] = [];
  let badSignatures = 0;

  beforeAll(async () => {
    const env = { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' };
    a = await createTestApp({ env });
    b = await createTestApp({ env, sameDatabaseAs: a, clock: a.clock });
    const owner = await given.signedIn(a, { username: 'twoinstances' });
    bot = await given.bot(a, { owner: owner.person });
    const me = await a.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
    const publicKey = (me.json() as { verify_key: string }).verify_key;
    const receiver = express();
    receiver.post('/events', express.raw({ type: 'application/json' }), async (req, res) => {
      if (!(await verifyKey(req.body as Buffer, req.header('X-Signature-Ed25519') ?? '', req.header('X-Signature-Timestamp') ?? '', publicKey))) {
        badSignatures += 1;
        res.status(401).end();
        return;
      }
      const body = JSON.parse((req.body as Buffer).toString('utf8')) as { type: number; event?: { data: { user: { id: string } } } };
      if (body.type === 1 && body.event) received.push(body.event.data.user.id);
      res.status(204).end();
    });
    server = await new Promise((resolve) => {
      const s = receiver.listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
    const set = await b.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { event_webhooks_url: url, event_webhooks_status: 2, event_webhooks_types: ['APPLICATION_AUTHORIZED'] } });
    expect(set.statusCode).toBe(200);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('each event is delivered once, whichever instance takes it', async () => {
    const count = 12;
    const people = [];
    const app = { ...bot.client.app, redirectUris: [bot.client.redirectUri] };
    for (let i = 0; i < count; i += 1) {
      const someone = await given.signedIn(i % 2 === 0 ? a : b);
      people.push(someone.person.id);
      await answerConsent(someone.agent, authorizePath(requestFor(app, { scope: 'identify', prompt: 'consent' })), 'authorize');
    }
    await Promise.all([deliverAppEvents(a.services, 'instance a'), deliverAppEvents(b.services, 'instance b')]);
    // Each finished its own claims; an event one of the app workers claimed may still be on its way.
    for (let round = 0; round < 100 && received.length < count; round += 1) await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect([...received].sort()).toEqual([...people].sort());
    expect(badSignatures).toBe(0);
    expect(await a.services.db.selectFrom('app_event_outbox').select('id').execute()).toEqual([]);
  });
});
