import type { Server } from 'node:http';
import { InteractionResponseType, InteractionType } from 'discord-interactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EVERYONE_PERMISSIONS, Permission } from '../../src/core/permissions.js';
import { callInteractionsEndpoint } from '../../src/modules/app-events/app-events.service.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { updateRole } from '../../src/modules/directory/roles.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { operatorActing } from '../support/acting.js';
import { given, type TestBot } from '../support/given.js';
import { installWithCommands, serveInteractions } from './interactions.fixtures.js';
import type { PageAgent } from '../support/page-agent.js';

/**
 * Issue #40 §2: a command typed in a channel's composer as `/name option:value` reaches the app's
 * endpoint (built on discord-interactions' verifyKeyMiddleware, unmodified) as Discord's
 * APPLICATION_COMMAND interaction, and the app's answer is posted by its bot, shown only to the
 * invoker (flag 64), or refused with the invoker told why and the delivery log saying more.
 */

interface Received {
  resolved?: never;
  entitlements?: unknown[];
  attachment_size_limit?: number;
  guild?: { id: string; locale: string; features: unknown[] };
  id: string;
  application_id: string;
  type: number;
  data: {
    id: string;
    name: string;
    type: number;
    options?: Array<{ name: string; type: number; value: unknown }>;
    resolved?: {
      users?: Record<string, { id: string; username: string }>;
      members?: Record<string, { permissions: string; roles: string[]; user?: unknown }>;
      roles?: Record<string, { id: string; name: string }>;
      channels?: Record<string, { id: string; name: string; type: number; permissions: string }>;
    };
  };
  guild_id?: string;
  channel_id: string;
  member?: { user: { id: string; username: string }; permissions: string; roles: string[] };
  user?: { id: string };
  token: string;
  version: number;
  app_permissions: string;
  locale: string;
}

describe('commands invoked from the composer (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE for the loopback app)', () => {
  let t: TestApp;
  let owner: { agent: PageAgent; person: Person };
  let bot: TestBot;
  let channel: Channel;
  let everyoneRoleId: string;
  let server: Server;
  const received: Received[] = [];
  let slowAnswer: Promise<void> | undefined;

  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    owner = await given.signedIn(t, { username: 'invoker' });
    bot = await given.bot(t, { owner: owner.person, name: 'Dice' });
    const made = await given.server(t, { owner: owner.person });
    channel = made.channels[0] as Channel;
    everyoneRoleId = made.everyoneRoleId;
    await installWithCommands(t, {
      bot,
      appName: 'Dice',
      installerId: owner.person.id,
      serverId: made.id,
      commands: [
      {
        name: 'roll',
        description: 'Rolls dice',
        options: [
          { name: 'sides', description: 'How many sides', type: 4, required: true, min_value: 2, max_value: 100 },
          { name: 'secret', description: 'Only I see it', type: 5 },
          { name: 'label', description: 'A label', type: 3 },
        ],
      },
      { name: 'garbage', description: 'Answers something invalid' },
      { name: 'sleepy', description: 'Answers too late' },
      { name: 'card', description: 'Answers with an embed' },
      { name: 'privatecard', description: 'Answers with an embed to the invoker only' },
      { name: 'badcard', description: 'Answers with an embed that breaks the rules' },
      {
        name: 'greet',
        description: 'Names someone, a role and a channel',
        options: [
          { name: 'who', description: 'Whom', type: 6, required: true },
          { name: 'role', description: 'Which role', type: 8 },
          { name: 'where', description: 'Which channel', type: 7 },
          { name: 'either', description: 'A user or a role', type: 9 },
        ],
      },
      ],
    });

    server = await serveInteractions(t, bot, (req, res) => {
      const body = req.body as Received;
      if (body.type !== InteractionType.APPLICATION_COMMAND) return void res.status(400).end();
      received.push(body);
      if (body.data.name === 'garbage') return void res.type('text/plain').send('not json');
      if (body.data.name === 'sleepy') {
        // Answers only after Gatehouse's 3-second deadline has passed.
        slowAnswer = new Promise((resolve) => setTimeout(resolve, 3500));
        return void slowAnswer.then(() => res.json({ type: 4, data: { content: 'too late' } }));
      }
      if (body.data.name === 'card' || body.data.name === 'privatecard') {
        return void res.json({
          type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE,
          data: {
            content: body.data.name === 'card' ? 'Your card, @everyone' : undefined,
            embeds: [{ title: 'Ace of spades', description: 'Drawn from a fresh deck', color: 0x3366ff, fields: [{ name: 'Suit', value: 'Spades', inline: true }] }],
            allowed_mentions: { parse: ['everyone'] },
            ...(body.data.name === 'privatecard' ? { flags: 64 } : {}),
          },
        });
      }
      if (body.data.name === 'badcard') return void res.json({ type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE, data: { embeds: [{ title: 'x'.repeat(257) }] } });
      const options = new Map((body.data.options ?? []).map((o) => [o.name, o.value]));
      res.json({
        type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE,
        data: { content: `Rolled a d${String(options.get('sides'))}${options.has('label') ? ` for ${String(options.get('label'))}` : ''}`, ...(options.get('secret') === true ? { flags: 64 } : {}) },
      });
    });
  });
  afterAll(async () => {
    await slowAnswer;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await t?.close();
  });

  const channelPath = () => `/channels/${channel.id}`;
  const send = (content: string) => owner.agent.submit(channelPath(), `${channelPath()}/messages`, { content });
  const history = async () => (await t.app.inject({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages?limit=50`, headers: bot.headers })).json() as Array<{ content: string; author: { id: string } }>;

  it('/roll sides:6 label:"two words" reaches the app as Discord’s APPLICATION_COMMAND and its type 4 answer is posted by the bot', async () => {
    const before = received.length;
    const posted = await send('/roll sides:6 label:"two words"');
    expect(posted.statusCode).toBe(303);
    const interaction = received[before] as Received;
    expect(interaction).toMatchObject({
      application_id: bot.client.app.id,
      type: 2,
      data: { name: 'roll', type: 1, options: [{ name: 'sides', type: 4, value: 6 }, { name: 'label', type: 3, value: 'two words' }] },
      guild_id: channel.serverId,
      channel_id: channel.id,
      member: { user: { id: owner.person.id, username: 'invoker' } },
      version: 1,
      locale: 'en-US',
    });
    expect(interaction.id).toMatch(/^\d+$/);
    expect(interaction.data.id).toMatch(/^\d+$/);
    expect(interaction.token.length).toBeGreaterThan(32);
    expect(BigInt(interaction.app_permissions) & Permission.SEND_MESSAGES).toBe(Permission.SEND_MESSAGES);
    expect(interaction).not.toHaveProperty('user');
    const messages = await history();
    expect(messages[0]).toMatchObject({ content: 'Rolled a d6 for two words', author: { id: bot.botUserId } });
    expect(messages.some((m) => m.content.startsWith('/roll'))).toBe(false);
  });

  it('the app’s signing key, once opened, serves only the server secrets that opened it: under other secrets nothing is signed or sent', async () => {
    const interaction = JSON.stringify({ type: 2, data: { name: 'roll', type: 1, options: [{ name: 'sides', type: 4, value: 2 }] } });
    const before = received.length;
    const signed = await callInteractionsEndpoint(t.services, bot.client.app.id, interaction);
    expect(signed).toMatchObject({ status: 200, failure: null });
    expect(received.length).toBe(before + 1);
    const otherSecrets = await callInteractionsEndpoint({ ...t.services, secrets: ['another-server-secret-of-40-characters!!'] }, bot.client.app.id, interaction);
    expect(otherSecrets?.failure).toMatch(/does not open with the server secrets/);
    expect(received.length).toBe(before + 1);
  });

  it('an answer with flag 64 is on the invoker’s view of the channel alone, marked "Only you can see this"; no other member and no bot read of the channel has it', async () => {
    const page = await send('/roll sides:20 secret:true');
    expect(page.statusCode).toBe(303);
    const mine = await owner.agent.get(channelPath());
    expect(mine.body).toMatch(/<li class="message ephemeral"[^>]*>[\s\S]*?invoker\b[^<]*used <span class="command-name">\/roll<\/span>[\s\S]*?Rolled a d20[\s\S]*?Only you can see this[\s\S]*?<\/li>/);
    const other = await given.signedIn(t, { username: 'onlooker' });
    await addMember(t.services, operatorActing(), channel.serverId as string, other.person.id);
    const theirs = await other.agent.get(channelPath());
    expect(theirs.statusCode).toBe(200);
    expect(theirs.body).not.toContain('Rolled a d20');
    expect((await history()).some((m) => m.content.includes('d20'))).toBe(false);
  });

  it('user, role, channel and mentionable options arrive with Discord\'s data.resolved (users, their member objects with permissions, roles, channels), beside entitlements and attachment_size_limit', async () => {
    t.clock.advance(10_000);
    const before = received.length;
    const posted = await send(`/greet who:<@${owner.person.id}> role:<@&${everyoneRoleId}> where:<#${channel.id}> either:${owner.person.id}`);
    expect(posted.statusCode).toBe(303);
    const interaction = received[before] as Received;
    expect(interaction.data.options).toEqual([
      { name: 'who', type: 6, value: owner.person.id },
      { name: 'role', type: 8, value: everyoneRoleId },
      { name: 'where', type: 7, value: channel.id },
      { name: 'either', type: 9, value: owner.person.id },
    ]);
    const resolved = interaction.data.resolved;
    expect(resolved?.users?.[owner.person.id]).toMatchObject({ id: owner.person.id, username: 'invoker' });
    expect(resolved?.members?.[owner.person.id]).toMatchObject({ roles: expect.any(Array) });
    expect(resolved?.members?.[owner.person.id]).not.toHaveProperty('user');
    expect(BigInt(resolved?.members?.[owner.person.id]?.permissions ?? '0') & Permission.ADMINISTRATOR).toBe(Permission.ADMINISTRATOR);
    expect(resolved?.roles?.[everyoneRoleId]).toMatchObject({ id: everyoneRoleId, name: '@everyone' });
    expect(resolved?.channels?.[channel.id]).toMatchObject({ id: channel.id, name: channel.name, type: 0 });
    expect(interaction).toMatchObject({ entitlements: [], attachment_size_limit: expect.any(Number), guild: { id: channel.serverId, locale: 'en-US', features: [] } });
  });

  it('an option naming a user who does not exist, or a role or channel of no such kind here, is refused in the composer and nothing is sent', async () => {
    t.clock.advance(10_000);
    const before = received.length;
    const nobody = await send('/greet who:<@1234567890123456789>');
    expect(nobody.statusCode).toBe(400);
    expect(nobody.body).toContain('The option who of /greet names no user here.');
    const otherRole = await send(`/greet who:<@${owner.person.id}> role:<@&1234567890123456789>`);
    expect(otherRole.statusCode).toBe(400);
    expect(otherRole.body).toContain('The option role of /greet names no role of this server here.');
    const notAChannel = await send(`/greet who:<@${owner.person.id}> where:<#${owner.person.id}>`);
    expect(notAChannel.statusCode).toBe(400);
    expect(notAChannel.body).toContain('The option where of /greet names no channel of this server here.');
    expect(received.length).toBe(before);
  });

  it('a bad option is refused in the composer with the reason, and nothing is sent', async () => {
    const before = received.length;
    for (const [content, reason] of [
      ['/roll sides:six', 'The option sides of /roll must be a whole number.'],
      ['/roll sides:1', 'The option sides of /roll must be at least 2.'],
      ['/roll', '/roll needs the option sides.'],
      ['/roll sides:6 colour:red', '/roll has no option &quot;colour&quot;'],
      ['/roll sides:6 secret:maybe', 'The option secret of /roll must be true or false.'],
    ] as const) {
      const page = await send(content);
      expect(page.statusCode).toBe(400);
      expect(page.body).toContain(reason);
    }
    expect(received.length).toBe(before);
  });

  it('a message naming no installed command is posted as text', async () => {
    const posted = await send('/shrug it is what it is');
    expect(posted.statusCode).toBe(303);
    expect((await history())[0]?.content).toBe('/shrug it is what it is');
  });

  it('an answer that is not JSON: the invoker reads "The application\'s answer was invalid", nothing is posted, the delivery log says why', async () => {
    const count = (await history()).length;
    const page = await send('/garbage');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('The application&#39;s answer was invalid');
    expect((await history()).length).toBe(count);
    const log = await owner.agent.get(`/developers/applications/${bot.client.app.id}/webhooks`);
    expect(log.body).toContain('Command /garbage');
    expect(log.body).toContain('its answer is not JSON');
  });

  it('a type 4 answer in the response body carries embeds and allowed_mentions as the callback and follow-ups do; mentions stay literal and notify nobody', async () => {
    t.clock.advance(10_000);
    const posted = await send('/card');
    expect(posted.statusCode).toBe(303);
    const [answer] = (await t.app.inject({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages?limit=1`, headers: bot.headers })).json() as Array<Record<string, unknown>>;
    expect(answer).toMatchObject({
      type: 20,
      content: 'Your card, @everyone',
      mentions: [],
      mention_everyone: false,
      embeds: [{ title: 'Ace of spades', description: 'Drawn from a fresh deck', color: 0x3366ff, fields: [{ name: 'Suit', value: 'Spades', inline: true }] }],
      interaction_metadata: { name: 'card', user: { id: owner.person.id } },
    });
    const page = await owner.agent.get(channelPath());
    expect(page.body).toContain('Ace of spades');
  });

  it('an ephemeral (flag 64) answer of embeds alone is shown to the invoker alone, as an embed', async () => {
    const count = (await history()).length;
    const page = await send('/privatecard');
    expect(page.statusCode).toBe(303);
    const mine = await owner.agent.get(channelPath());
    expect(mine.body).toMatch(/<li class="message ephemeral"[\s\S]*?Ace of spades[\s\S]*?Drawn from a fresh deck[\s\S]*?Only you can see this/);
    expect((await history()).length).toBe(count);
  });

  it('an answer whose embed breaks the follow-ups\' rules: the invoker reads "The application\'s answer was invalid", nothing is posted, the delivery log names the field', async () => {
    const count = (await history()).length;
    const page = await send('/badcard');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('The application&#39;s answer was invalid');
    expect((await history()).length).toBe(count);
    const log = await owner.agent.get(`/developers/applications/${bot.client.app.id}/webhooks`);
    expect(log.body).toContain('its data is invalid (data.embeds.0.title:');
  });

  it('no answer within 3 seconds: the invoker reads "The application did not respond" and nothing is posted', async () => {
    const count = (await history()).length;
    const page = await send('/sleepy');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('The application did not respond');
    expect((await history()).length).toBe(count);
  });

  it('a member without Use application commands is refused (403) and nothing reaches the app', async () => {
    const member = await given.signedIn(t, { username: 'quiet' });
    await addMember(t.services, operatorActing(), channel.serverId as string, member.person.id);
    await updateRole(t.services, operatorActing(), channel.serverId as string, everyoneRoleId, { permissions: DEFAULT_EVERYONE_PERMISSIONS & ~Permission.USE_APPLICATION_COMMANDS });
    const before = received.length;
    const refused = await member.agent.submit(channelPath(), `${channelPath()}/messages`, { content: '/roll sides:6' });
    expect(refused.statusCode).toBe(403);
    expect(received.length).toBe(before);
  });
});
