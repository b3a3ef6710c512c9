import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { InteractionResponseType, verifyKeyMiddleware } from 'discord-interactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import type { Person } from '../../src/modules/directory/people.js';
import { writeServerInstall } from '../../src/modules/applications/installs.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/database.js';
import { personActingOf } from '../support/acting.js';
import { given, type TestBot } from '../support/given.js';
import type { PageAgent } from '../support/page-agent.js';

/**
 * Issue #40 "Done when": a command invoked on one instance is answered through a follow-up on
 * another. The interaction and its hashed token are in the shared database, not in an instance's
 * memory, so instance B completes what instance A sent.
 */
const canRun = Boolean(TEST_DATABASE_URL);
if (!canRun) console.log('interaction-instances: skipped: two instances need one shared database, TEST_DATABASE_URL (PostgreSQL)');

describe.skipIf(!canRun)('interactions with two instances on one PostgreSQL database', () => {
  let a: TestApp;
  let b: TestApp;
  let owner: { agent: PageAgent; person: Person };
  let bot: TestBot;
  let channel: Channel;
  let server: Server;
  const tokens: Array<{ application_id: string; token: string }> = [];

  beforeAll(async () => {
    const env = { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' };
    a = await createTestApp({ env });
    b = await createTestApp({ env, sameDatabaseAs: a, clock: a.clock });
    owner = await given.signedIn(a, { username: 'twoplaces' });
    bot = await given.bot(a, { owner: owner.person, name: 'Relay' });
    const made = await given.server(a, { owner: owner.person });
    channel = made.channels[0] as Channel;
    await a.services.db.transaction().execute((trx) =>
      writeServerInstall(a.services, personActingOf(owner.person.id), trx, {
        application: { id: bot.client.app.id, name: 'Relay', botUserId: bot.botUserId },
        serverId: made.id,
        installerId: owner.person.id,
        granted: Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES,
        commands: true,
      }),
    );
    expect((await a.app.inject({ method: 'PUT', url: `/api/v1/applications/${bot.client.app.id}/commands`, headers: bot.headers, payload: [{ name: 'later', description: 'Answers later' }] })).statusCode).toBe(200);
    const me = await a.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
    const publicKey = (me.json() as { verify_key: string }).verify_key;
    const app = express();
    app.post('/interactions', verifyKeyMiddleware(publicKey), (req, res) => {
      const body = req.body as { type: number; application_id: string; token: string };
      if (body.type === 2) tokens.push({ application_id: body.application_id, token: body.token });
      res.json({ type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE });
    });
    server = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/interactions`;
    expect((await a.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { interactions_endpoint_url: url } })).statusCode).toBe(200);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('a command invoked through instance A is completed by a follow-up and an edit of @original through instance B', async () => {
    const path = `/channels/${channel.id}`;
    expect((await owner.agent.submit(path, `${path}/messages`, { content: '/later' })).statusCode).toBe(303);
    const sent = tokens[0];
    expect(sent).toBeDefined();
    const base = `/api/v1/webhooks/${sent?.application_id}/${sent?.token}`;
    const edited = await b.app.inject({ method: 'PATCH', url: `${base}/messages/@original`, payload: { content: 'Done, from B' } });
    expect(edited.statusCode).toBe(200);
    expect(edited.json()).toMatchObject({ content: 'Done, from B', flags: 0, interaction_metadata: { name: 'later', user: { id: owner.person.id } } });
    const followUp = await b.app.inject({ method: 'POST', url: base, payload: { content: 'And a follow-up' } });
    expect(followUp.statusCode).toBe(200);
    const page = await owner.agent.get(path);
    expect(page.body).toContain('Done, from B');
    expect(page.body).toContain('And a follow-up');
    expect(page.body).not.toContain('Relay is thinking…');
  });
});
