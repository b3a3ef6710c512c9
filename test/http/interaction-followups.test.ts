import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { API } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import { InteractionResponseType, InteractionType } from 'discord-interactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/modules/directory/channels.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { given, type TestBot } from '../support/given.js';
import { installWithCommands, serveInteractions } from './interactions.fixtures.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { operatorActing } from '../support/acting.js';
import { cookieOf, SseReader } from '../support/sse.js';
import type { PageAgent } from '../support/page-agent.js';

/**
 * Issue #40 §2: an app built on discord-interactions' verifyKeyMiddleware (unmodified) defers its
 * answer (type 5) and completes it through @discordjs/core's interactions API with the interaction
 * token alone; the callback route answers once; tokens are hashed, valid 15 minutes and refused
 * with Discord's bodies otherwise; follow-ups and invocations are rate-limited.
 */

interface Received {
  id: string;
  application_id: string;
  token: string;
  data: { name: string };
}

describe('deferred answers and follow-ups (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE for the loopback app)', () => {
  let t: TestApp;
  let baseUrl: string;
  let api: API;
  let owner: { agent: PageAgent; person: Person };
  let bot: TestBot;
  let channel: Channel;
  let appServer: Server;
  const received: Received[] = [];
  const callbackResponses: unknown[] = [];

  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    // @discordjs/core as an app uses it, pointed at Gatehouse: no bot token, the interaction token authorizes.
    api = new API(new REST({ api: `${baseUrl}/api`, version: '1', timeout: 15_000 }));
    owner = await given.signedIn(t, { username: 'asker' });
    bot = await given.bot(t, { owner: owner.person, name: 'Oracle' });
    const made = await given.server(t, { owner: owner.person });
    channel = made.channels[0] as Channel;
    await installWithCommands(t, {
      bot,
      appName: 'Oracle',
      installerId: owner.person.id,
      serverId: made.id,
      commands: [
      { name: 'think', description: 'Answers later' },
      { name: 'whisper', description: 'Answers later, to the invoker only' },
      { name: 'callback', description: 'Answers through the callback route' },
      { name: 'weird', description: 'Answers with an unknown type' },
      { name: 'long', description: 'Answers with too much' },
      { name: 'ping', description: 'Answers at once' },
      { name: 'respond', description: 'Answers through the callback route with with_response' },
      { name: 'respondlater', description: 'Defers through the callback route with with_response' },
      { name: 'respondquietly', description: 'Answers the invoker alone through the callback route with with_response' },
      ],
    });

    appServer = await serveInteractions(t, bot, (req, res) => {
      const body = req.body as Received & { type: number };
      if (body.type !== InteractionType.APPLICATION_COMMAND) return void res.status(400).end();
      received.push(body);
      switch (body.data.name) {
        case 'think':
          return void res.json({ type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE });
        case 'whisper':
          return void res.json({ type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE, data: { flags: 64 } });
        case 'callback':
          // Answered by HTTP through @discordjs/core, then the request is closed without a body.
          return void api.interactions
            .reply(body.id, body.token, { content: 'Answered by callback' })
            .then(() => res.status(202).end())
            .catch(() => res.status(500).end());
        case 'respond':
        case 'respondlater':
        case 'respondquietly':
          // @discordjs/core's with_response: the callback answers Discord's interaction callback response.
          return void (body.data.name === 'respond'
            ? api.interactions.reply(body.id, body.token, { content: 'Answered with the response', embeds: [{ title: 'Receipt' }], with_response: true })
            : body.data.name === 'respondquietly'
              ? api.interactions.reply(body.id, body.token, { content: 'Between us', flags: 64, with_response: true })
              : api.interactions.defer(body.id, body.token, { with_response: true })
          )
            .then((response) => {
              callbackResponses.push(response);
              res.status(202).end();
            })
            .catch((error: unknown) => {
              callbackResponses.push(error);
              res.status(500).end();
            });
        case 'weird':
          return void res.json({ type: 42 });
        case 'long':
          return void res.json({ type: 4, data: { content: 'x'.repeat(2001) } });
        default:
          return void res.json({ type: 4, data: { content: 'pong' } });
      }
    });
  });
  afterAll(async () => {
    if (appServer) await new Promise<void>((resolve) => appServer.close(() => resolve()));
    // fetch's spare connection from the event streams would hold up the server's close (support/sse.ts).
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  const channelPath = () => `/channels/${channel.id}`;
  const send = (agent: PageAgent, content: string) => agent.submit(channelPath(), `${channelPath()}/messages`, { content });
  const last = () => received[received.length - 1] as Received;
  const original = (interaction: Received) => t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${interaction.application_id}/${interaction.token}/messages/@original` });

  it('a type 5 answer posts the bot’s placeholder with flag LOADING, shown as "Oracle is thinking…" under "asker used /think"', async () => {
    const posted = await send(owner.agent, '/think');
    expect(posted.statusCode).toBe(303);
    const answer = await original(last());
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({
      type: 20,
      flags: 128,
      content: '',
      author: { id: bot.botUserId, bot: true },
      application_id: bot.client.app.id,
      interaction_metadata: { id: last().id, type: 2, name: 'think', user: { id: owner.person.id } },
      interaction: { id: last().id, type: 2, name: 'think', user: { id: owner.person.id } },
    });
    const page = await owner.agent.get(channelPath());
    expect(page.body).toContain('Oracle is thinking…');
    expect(page.body).toMatch(/asker\b[^<]*used <span class="command-name">\/think<\/span>/);
  });

  it('the app completes it through @discordjs/core: editReply fills @original (no longer thinking), followUp posts a message, each showing who used /think', async () => {
    const interaction = last();
    const edited = await api.interactions.editReply(interaction.application_id, interaction.token, { content: 'The answer is 42' });
    expect(edited).toMatchObject({ content: 'The answer is 42', flags: 0, edited_timestamp: null });
    const followUp = await api.interactions.followUp(interaction.application_id, interaction.token, { content: 'And one more thing', embeds: [{ title: 'Details' }] });
    expect(followUp).toMatchObject({ content: 'And one more thing', interaction_metadata: { name: 'think' }, embeds: [{ title: 'Details' }] });
    const fetched = await api.webhooks.getMessage(interaction.application_id, interaction.token, followUp.id);
    expect(fetched.id).toBe(followUp.id);
    const page = await owner.agent.get(channelPath());
    expect(page.body).not.toContain('Oracle is thinking…');
    expect(page.body).toContain('The answer is 42');
    expect(page.body).toContain('And one more thing');
    expect(page.body.match(/used <span class="command-name">\/think<\/span>/g)?.length).toBe(2);
    await api.interactions.deleteReply(interaction.application_id, interaction.token, followUp.id);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${interaction.application_id}/${interaction.token}/messages/${followUp.id}` })).statusCode).toBe(404);
  });

  it('follow-ups keep the message rules of webhook execute: content over 2000 is 50035 and nothing is posted', async () => {
    const interaction = last();
    const refused = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${interaction.application_id}/${interaction.token}`, payload: { content: 'y'.repeat(2001) } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 50035, errors: { content: {} } });
  });

  it('the interaction token is stored only as a hash', async () => {
    const rows = await t.services.db.selectFrom('interactions').select(['id', 'token_hash']).execute();
    const row = rows.find((r) => String(r.id) === last().id);
    expect(row).toBeDefined();
    expect(row?.token_hash).not.toContain(last().token);
    expect(rows.map((r) => r.token_hash).join(' ')).not.toContain(last().token);
  });

  it('an ephemeral deferral (flag 64): "Oracle is thinking…" for the invoker alone; editReply fills it and followUp adds to it with flags 64, live on their stream, never on another member’s or in a bot’s read', async () => {
    // Past the invocation and follow-up buckets of the tests before (SPEC §8 limits are not under test here).
    t.clock.advance(10_000);
    const other = await given.signedIn(t, { username: 'bystander' });
    await addMember(t.services, operatorActing(), channel.serverId as string, other.person.id);
    const stream = (agent: PageAgent) => SseReader.open(`${baseUrl}${channelPath()}/events`, { cookie: cookieOf(agent) });
    const [mine, theirs] = await Promise.all([stream(owner.agent), stream(other.agent)]);
    try {
      await Promise.all([mine.next(), theirs.next()]);
      expect((await send(owner.agent, '/whisper')).statusCode).toBe(303);
      const interaction = last();
      const thinking = await mine.next((e) => e.event === 'message' && e.data.includes('Oracle is thinking…'));
      // Never a Last-Event-ID: only the channel's history names where a reconnect resumes.
      expect(thinking.id).toBeUndefined();
      expect(thinking.data).toContain('Only you can see this');
      const placeholder = (await original(interaction)).json() as { id: string };
      expect(placeholder).toMatchObject({ type: 20, flags: 64 | 128, content: '', author: { id: bot.botUserId }, interaction_metadata: { id: interaction.id, name: 'whisper', user: { id: owner.person.id } } });
      expect((await owner.agent.get(channelPath())).body).toMatch(/<li class="message ephemeral"[^>]*>[\s\S]*?asker\b[^<]*used <span class="command-name">\/whisper<\/span>[\s\S]*?Oracle is thinking…/);

      const edited = await api.interactions.editReply(interaction.application_id, interaction.token, { content: 'Psst: 42' });
      expect(edited).toMatchObject({ id: placeholder.id, flags: 64, content: 'Psst: 42', edited_timestamp: null });
      const filled = await mine.next((e) => e.event === 'message' && e.data.includes('Psst: 42'));
      expect(filled.data).toContain(`id="m${placeholder.id}"`);
      expect(filled.data).not.toContain('thinking');
      const followUp = await api.interactions.followUp(interaction.application_id, interaction.token, { content: 'Also: 7', flags: 64 });
      expect(followUp).toMatchObject({ type: 20, flags: 64, content: 'Also: 7', interaction_metadata: { name: 'whisper' } });
      expect((await api.webhooks.getMessage(interaction.application_id, interaction.token, followUp.id)).flags).toBe(64);
      await mine.next((e) => e.event === 'message' && e.data.includes('Also: 7'));
      const page = await owner.agent.get(channelPath());
      expect(page.body).toContain('Psst: 42');
      expect(page.body).toContain('Also: 7');

      // A public follow-up reaches everyone: by then the other member's stream has had all it would get.
      await api.interactions.followUp(interaction.application_id, interaction.token, { content: 'Public: done' });
      const seen: string[] = [];
      await theirs.next((e) => (seen.push(e.data), e.data.includes('Public: done')));
      expect(seen.join('\n')).not.toMatch(/Psst|Also: 7|ephemeral/);
      expect((await other.agent.get(channelPath())).body).not.toMatch(/Psst|Also: 7/);
      const read = (await t.app.inject({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages?limit=50`, headers: bot.headers })).json() as Array<{ content: string }>;
      expect(read.map((m) => m.content)).toContain('Public: done');
      expect(read.map((m) => m.content).join('\n')).not.toMatch(/Psst|Also: 7/);

      await api.interactions.deleteReply(interaction.application_id, interaction.token, followUp.id);
      expect((await mine.next((e) => e.event === 'delete')).data).toBe(followUp.id);
      expect((await owner.agent.get(channelPath())).body).not.toContain('Also: 7');
    } finally {
      mine.close();
      theirs.close();
    }
  });

  it('an answer by POST …/callback is posted once; a second answer is Discord’s 400 40060', async () => {
    t.clock.advance(5000);
    const posted = await send(owner.agent, '/callback');
    expect(posted.statusCode).toBe(303);
    const interaction = last();
    expect((await original(interaction)).json()).toMatchObject({ content: 'Answered by callback', interaction_metadata: { name: 'callback' } });
    const again = await t.app.inject({ method: 'POST', url: `/api/v1/interactions/${interaction.id}/${interaction.token}/callback`, payload: { type: 4, data: { content: 'twice' } } });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ code: 40060 });
    expect(again.headers).toMatchObject({ 'x-ratelimit-limit': '10' });
    expect(again.headers).toHaveProperty('x-ratelimit-bucket');
    const unknown = await t.app.inject({ method: 'POST', url: `/api/v1/interactions/${interaction.id}/${interaction.token}x/callback`, payload: { type: 4, data: { content: 'no' } } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 10062 });
  });

  it('with_response=true on the callback route answers 200 with Discord’s interaction callback response: the interaction and the message posted', async () => {
    t.clock.advance(10_000);
    expect((await send(owner.agent, '/respond')).statusCode).toBe(303);
    const interaction = last();
    const response = callbackResponses.at(-1) as { interaction: Record<string, unknown>; resource: { type: number; message: Record<string, unknown> } };
    const posted = (await original(interaction)).json() as { id: string };
    expect(response).toEqual({
      interaction: { id: interaction.id, type: 2, response_message_id: posted.id, response_message_loading: false, response_message_ephemeral: false },
      resource: { type: 4, message: expect.objectContaining({ id: posted.id, type: 20, content: 'Answered with the response', embeds: [expect.objectContaining({ title: 'Receipt' })], interaction_metadata: expect.objectContaining({ id: interaction.id, name: 'respond' }) }) },
    });
    expect((await send(owner.agent, '/respondlater')).statusCode).toBe(303);
    const later = callbackResponses.at(-1) as { interaction: Record<string, unknown>; resource: { type: number; message: Record<string, unknown> } };
    expect(later.interaction).toMatchObject({ id: last().id, response_message_loading: true, response_message_ephemeral: false });
    expect(later.resource).toMatchObject({ type: 5, message: { flags: 128, content: '', interaction_metadata: { name: 'respondlater' } } });
    t.clock.advance(10_000);
    expect((await send(owner.agent, '/respondquietly')).statusCode).toBe(303);
    const quiet = callbackResponses.at(-1) as { interaction: Record<string, unknown>; resource: { type: number; message: Record<string, unknown> } };
    const stored = (await original(last())).json() as { id: string };
    expect(quiet.interaction).toEqual({ id: last().id, type: 2, response_message_id: stored.id, response_message_loading: false, response_message_ephemeral: true });
    expect(quiet.resource).toMatchObject({ type: 4, message: { id: stored.id, flags: 64, content: 'Between us', interaction_metadata: { name: 'respondquietly' } } });
  });

  it('without with_response the callback answers 204; a with_response that is not a boolean is 50035 and the answer is not used', async () => {
    t.clock.advance(10_000);
    expect((await send(owner.agent, '/think')).statusCode).toBe(303);
    const interaction = last();
    // /think was deferred in the response body, so a callback now is 40060 — but the bad query is refused before the answer is looked at.
    const bad = await t.app.inject({ method: 'POST', url: `/api/v1/interactions/${interaction.id}/${interaction.token}/callback?with_response=maybe`, payload: { type: 4, data: { content: 'x' } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 50035, errors: { with_response: { _errors: [{ code: 'BASE_TYPE_BAD_TYPE' }] } } });
    const again = await t.app.inject({ method: 'POST', url: `/api/v1/interactions/${interaction.id}/${interaction.token}/callback?with_response=false`, payload: { type: 4, data: { content: 'x' } } });
    expect(again.json()).toMatchObject({ code: 40060 });
  });

  it('an answer of unknown type or with content over 2000: the invoker reads "The application\'s answer was invalid", nothing is posted, the delivery log says why', async () => {
    t.clock.advance(5000);
    for (const [command, why] of [
      ['/weird', 'its answer has type 42, not 4 or 5'],
      ['/long', 'its data.content is longer than 2000 characters'],
    ] as const) {
      const page = await send(owner.agent, command);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('The application&#39;s answer was invalid');
      expect((await original(last())).statusCode).toBe(404);
      const log = await owner.agent.get(`/developers/applications/${bot.client.app.id}/webhooks`);
      expect(log.body).toContain(why);
    }
  });

  it('a follow-up to another app’s interaction, or with an unknown token, is Discord’s 404 Unknown Webhook (10015)', async () => {
    const other = await given.bot(t, { owner: owner.person, name: 'Other' });
    const interaction = last();
    const foreign = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${other.client.app.id}/${interaction.token}`, payload: { content: 'hijack' } });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ code: 10015, message: 'Unknown Webhook' });
    const unknown = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${interaction.application_id}/${interaction.token.slice(0, -4)}abcd`, payload: { content: 'guess' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 10015 });
  });

  it('follow-ups answer X-RateLimit-* headers and a 429 past 10 in 2 s per app and channel', async () => {
    const interaction = last();
    const url = `/api/v1/webhooks/${interaction.application_id}/${interaction.token}/messages/@original`;
    t.clock.advance(5000);
    const statuses: number[] = [];
    let headers: Record<string, unknown> = {};
    for (let i = 0; i < 11; i += 1) {
      const answer = await t.app.inject({ method: 'GET', url });
      statuses.push(answer.statusCode);
      headers = answer.headers;
      if (i === 0) expect(answer.headers).toMatchObject({ 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '9' });
    }
    // The last interaction's answer was refused, so @original is 404: counted all the same.
    expect(statuses.slice(0, 10)).not.toContain(429);
    expect(statuses[10]).toBe(429);
    expect(headers).toHaveProperty('x-ratelimit-bucket');
    expect(headers).toHaveProperty('retry-after');
  });

  it('a person cannot flood an app: past 5 invocations in 10 s they are told to wait and nothing reaches the app', async () => {
    t.clock.advance(20_000);
    for (let i = 0; i < 5; i += 1) expect((await send(owner.agent, '/ping')).statusCode).toBe(303);
    const before = received.length;
    const page = await send(owner.agent, '/ping');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('commands too fast here');
    expect(received.length).toBe(before);
    t.clock.advance(10_000);
    expect((await send(owner.agent, '/ping')).statusCode).toBe(303);
  });

  it('after 15 minutes the token is expired: Discord’s 401 Invalid Webhook Token (50027)', async () => {
    const interaction = last();
    t.clock.advance(15 * 60_000 + 1);
    const expired = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${interaction.application_id}/${interaction.token}`, payload: { content: 'late' } });
    expect(expired.statusCode).toBe(401);
    expect(expired.json()).toMatchObject({ code: 50027, message: 'Invalid Webhook Token' });
  });

  it('Dismiss message: the one reader of an ephemeral message removes it from their view (the page script gets 204, a form 303); anyone else gets 404; the app’s later edit is 10008', async () => {
    t.clock.advance(10_000);
    expect((await send(owner.agent, '/whisper')).statusCode).toBe(303);
    const interaction = last();
    const id = ((await original(interaction)).json() as { id: string }).id;
    const dismiss = `${channelPath()}/messages/${id}/dismiss`;
    expect((await owner.agent.get(channelPath())).body).toContain(`<a href="${dismiss}" data-dismiss>Dismiss message</a>`);
    const stranger = await given.signedIn(t, { username: 'stranger' });
    await addMember(t.services, operatorActing(), channel.serverId as string, stranger.person.id);
    expect((await stranger.agent.get(dismiss)).statusCode).toBe(404);
    expect((await stranger.agent.submit(channelPath(), dismiss, {})).statusCode).toBe(404);
    const confirm = await owner.agent.get(dismiss);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Dismiss this message?');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(confirm.body)?.[1] ?? '';
    const byScript = await owner.agent.postRaw(dismiss, { _csrf: csrf }, { accept: 'application/json' });
    expect(byScript.statusCode).toBe(204);
    expect((await owner.agent.get(channelPath())).body).not.toContain(`id="m${id}"`);
    const late = await t.app.inject({ method: 'PATCH', url: `/api/v1/webhooks/${interaction.application_id}/${interaction.token}/messages/@original`, payload: { content: 'too late' } });
    expect(late.statusCode).toBe(404);
    expect(late.json()).toMatchObject({ code: 10008 });
    // Without JavaScript: the form's 303 back to the channel.
    t.clock.advance(10_000);
    expect((await send(owner.agent, '/whisper')).statusCode).toBe(303);
    const second = ((await original(last())).json() as { id: string }).id;
    const byForm = await owner.agent.submit(`${channelPath()}/messages/${second}/dismiss`, `${channelPath()}/messages/${second}/dismiss`, {});
    expect(byForm.statusCode).toBe(303);
    expect(byForm.headers.location).toBe(channelPath());
    expect((await owner.agent.get(channelPath())).body).not.toContain(`id="m${second}"`);
  });

  it('an ephemeral answer lasts as long as its token: after 15 minutes it is on no page', async () => {
    t.clock.advance(10_000);
    expect((await send(owner.agent, '/whisper')).statusCode).toBe(303);
    expect((await owner.agent.get(channelPath())).body).toContain('<li class="message ephemeral"');
    t.clock.advance(15 * 60_000 + 1);
    expect((await owner.agent.get(channelPath())).body).not.toContain('<li class="message ephemeral"');
  });
});
