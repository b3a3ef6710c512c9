import type { Server } from 'node:http';
import { InteractionResponseType, InteractionType } from 'discord-interactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EVERYONE_PERMISSIONS, Permission } from '../../src/core/permissions.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import type { Person } from '../../src/modules/directory/people.js';
import { removeUserInstall } from '../../src/modules/applications/user-installs.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { updateRole } from '../../src/modules/directory/roles.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { operatorActing, personActingOf } from '../support/acting.js';
import { given, type TestBot } from '../support/given.js';
import { installWithCommands, listedCommands, serveInteractions } from './interactions.fixtures.js';
import type { PageAgent } from '../support/page-agent.js';
import { openDm, userInstall } from './dms.fixtures.js';

/**
 * Issue #40 §2: the composer's `/` list offers the commands reachable in the channel (embedded in
 * the page as the textarea's data-commands), and in a DM with an app's bot the person's user
 * install of that app makes its commands reachable: the app (discord-interactions'
 * verifyKeyMiddleware, unmodified) receives Discord's BOT_DM interaction and its bot posts the
 * answer in the DM.
 */

interface Received {
  type: number;
  data: { name: string; options?: Array<{ name: string; type: number; value: unknown }> };
  guild_id?: string;
  channel_id: string;
  member?: unknown;
  user?: { id: string; username: string };
  context?: number;
  authorizing_integration_owners?: Record<string, string>;
  app_permissions: string;
}

describe('the composer’s command list and commands in DMs (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE for the loopback app)', () => {
  let t: TestApp;
  let owner: { agent: PageAgent; person: Person };
  let bot: TestBot;
  let channel: Channel;
  let everyoneRoleId: string;
  let server: Server;
  const received: Received[] = [];

  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    owner = await given.signedIn(t, { username: 'lister' });
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
          { name: 'sides', description: 'How many sides', type: 4, required: true },
          { name: 'colour', description: 'Of the dice', type: 3, choices: [{ name: 'red', value: 'r' }, { name: 'blue', value: 'b' }] },
        ],
      },
      { name: 'admin', description: 'Has sub-commands', options: [{ name: 'reset', description: 'Resets', type: 1 }] },
      { name: 'whisper', description: 'Answers only the invoker' },
      ],
    });

    server = await serveInteractions(t, bot, (req, res) => {
      const body = req.body as Received;
      if (body.type !== InteractionType.APPLICATION_COMMAND) return void res.status(400).end();
      received.push(body);
      if (body.data.name === 'whisper') return void res.json({ type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE, data: { content: 'Only for you', flags: 64 } });
      const sides = body.data.options?.find((o) => o.name === 'sides')?.value;
      res.json({ type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE, data: { content: `Rolled a d${String(sides)} in ${body.guild_id ? 'a server' : 'a DM'}` } });
    });
  });
  afterAll(async () => {
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await t?.close();
  });

  const messagesOf = async (channelId: string) =>
    (await t.app.inject({ method: 'GET', url: `/api/v1/channels/${channelId}/messages?limit=50`, headers: bot.headers })).json() as Array<{ content: string; author: { id: string } }>;

  /** A person who user-installed Dice, and the DM its bot opened with them. */
  async function dmWithDice(username: string): Promise<{ agent: PageAgent; person: Person; dmId: string }> {
    const someone = await given.signedIn(t, { username });
    await userInstall(t, bot, someone.person);
    const opened = await openDm(t, bot, { recipient_id: someone.person.id });
    expect(opened.statusCode).toBe(200);
    return { ...someone, dmId: (opened.json() as { id: string }).id };
  }

  describe('the / list', () => {
    it('a server channel’s page lists the installed apps’ commands with the app, the description and the options with their descriptions and required flags', async () => {
      const page = await owner.agent.get(`/channels/${channel.id}`);
      expect(listedCommands(page.body)?.filter((c) => c.name !== 'whisper')).toEqual([
        {
          name: 'roll',
          description: 'Rolls dice',
          app: 'Dice',
          options: [
            { name: 'sides', description: 'How many sides', required: true, kind: 'a whole number' },
            { name: 'colour', description: 'Of the dice', required: false, kind: 'text', choices: ['red', 'blue'] },
          ],
        },
      ]);
      expect(page.body).toContain('Type / for the apps’ commands.');
    });

    it('a member without Use application commands is offered no commands', async () => {
      const member = await given.signedIn(t, { username: 'nocommands' });
      await addMember(t.services, operatorActing(), channel.serverId as string, member.person.id);
      await updateRole(t.services, operatorActing(), channel.serverId as string, everyoneRoleId, { permissions: DEFAULT_EVERYONE_PERMISSIONS & ~Permission.USE_APPLICATION_COMMANDS });
      try {
        const page = await member.agent.get(`/channels/${channel.id}`);
        expect(page.statusCode).toBe(200);
        expect(page.body).toContain('<textarea id="content"');
        expect(listedCommands(page.body)).toBeUndefined();
      } finally {
        await updateRole(t.services, operatorActing(), channel.serverId as string, everyoneRoleId, { permissions: DEFAULT_EVERYONE_PERMISSIONS });
      }
    });

    it('a channel of a server without apps offers no commands', async () => {
      const other = await given.server(t, { owner: owner.person });
      const page = await owner.agent.get(`/channels/${(other.channels[0] as Channel).id}`);
      expect(page.statusCode).toBe(200);
      expect(listedCommands(page.body)).toBeUndefined();
    });
  });

  it('a server channel’s interaction carries context 0 (GUILD) and the server as its authorizing integration owner', async () => {
    const before = received.length;
    const posted = await owner.agent.submit(`/channels/${channel.id}`, `/channels/${channel.id}/messages`, { content: '/roll sides:4' });
    expect(posted.statusCode).toBe(303);
    expect(received[before]).toMatchObject({ guild_id: channel.serverId, channel_id: channel.id, context: 0, authorizing_integration_owners: { '0': channel.serverId } });
  });

  it('a typed /name runs the command of the first app installed with applications.commands and a bot; an app installed without its commands is passed over', async () => {
    const other = await given.server(t, { owner: owner.person });
    const otherChannel = other.channels[0] as Channel;
    const roll = { name: 'roll', description: 'Rolls too', options: [{ name: 'sides', description: 'Sides', type: 4, required: true }] };
    const botOnly = await given.bot(t, { owner: owner.person, name: 'Coin' });
    const later = await given.bot(t, { owner: owner.person, name: 'Echo' });
    const laterReceived: unknown[] = [];
    const laterServer = await serveInteractions(t, later, (req, res) => {
      laterReceived.push(req.body);
      res.json({ type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE, data: { content: 'Echo rolled' } });
    });
    try {
      // Install order: Coin (bot alone), then Dice, then Echo; all three have a command `roll`.
      await installWithCommands(t, { bot: botOnly, appName: 'Coin', installerId: owner.person.id, serverId: other.id, commands: [roll], commandsInServer: false });
      t.clock.advance(1000);
      await installWithCommands(t, { bot, appName: 'Dice', installerId: owner.person.id, serverId: other.id });
      t.clock.advance(1000);
      await installWithCommands(t, { bot: later, appName: 'Echo', installerId: owner.person.id, serverId: other.id, commands: [roll] });

      const before = received.length;
      const posted = await owner.agent.submit(`/channels/${otherChannel.id}`, `/channels/${otherChannel.id}/messages`, { content: '/roll sides:6' });
      expect(posted.statusCode).toBe(303);
      expect(received.slice(before)).toMatchObject([{ guild_id: other.id, data: { name: 'roll', options: [{ name: 'sides', value: 6 }] } }]);
      expect(laterReceived).toEqual([]);
      expect((await messagesOf(otherChannel.id))[0]).toMatchObject({ content: 'Rolled a d6 in a server', author: { id: bot.botUserId } });
    } finally {
      await new Promise<void>((resolve) => laterServer.close(() => resolve()));
    }
  });

  describe('in a DM with the app’s bot', () => {
    it('the person’s user install makes the app’s commands reachable: Discord’s BOT_DM interaction, answered by the bot in the DM', async () => {
      const { agent, person, dmId } = await dmWithDice('dmuser');
      const page = await agent.get(`/messages/${dmId}`);
      expect(page.statusCode).toBe(200);
      expect(listedCommands(page.body)?.map((c) => c.name)).toEqual(['roll', 'whisper']);
      expect(page.body).toContain('Use a command of Dice');

      const before = received.length;
      const posted = await agent.submit(`/messages/${dmId}`, `/messages/${dmId}`, { content: '/roll sides:12' });
      expect(posted.statusCode).toBe(303);
      expect(posted.headers.location).toBe(`/messages/${dmId}#reply`);
      const interaction = received[before] as Received;
      expect(interaction).toMatchObject({
        type: 2,
        data: { name: 'roll', options: [{ name: 'sides', type: 4, value: 12 }] },
        channel_id: dmId,
        user: { id: person.id, username: 'dmuser' },
        context: 1,
        authorizing_integration_owners: { '1': person.id },
      });
      expect(interaction).not.toHaveProperty('guild_id');
      expect(interaction).not.toHaveProperty('member');
      expect(BigInt(interaction.app_permissions) & Permission.SEND_MESSAGES).toBe(Permission.SEND_MESSAGES);

      const messages = await messagesOf(dmId);
      expect(messages[0]).toMatchObject({ content: 'Rolled a d12 in a DM', author: { id: bot.botUserId } });
      expect((await agent.get(`/messages/${dmId}`)).body).toContain('Rolled a d12 in a DM');
    });

    it('an answer with flag 64 is on the person’s view of the DM alone, marked "Only you can see this", and not among its messages', async () => {
      const { agent, dmId } = await dmWithDice('dmwhisper');
      const page = await agent.submit(`/messages/${dmId}`, `/messages/${dmId}`, { content: '/whisper' });
      expect(page.statusCode).toBe(303);
      const view = await agent.get(`/messages/${dmId}`);
      expect(view.body).toMatch(/<li class="message ephemeral"[\s\S]*?Only for you[\s\S]*?Only you can see this/);
      expect(await messagesOf(dmId)).toEqual([]);
    });

    it('a bad option is refused beside the DM’s composer with the reason, and nothing is sent', async () => {
      const { agent, dmId } = await dmWithDice('dmtypo');
      const before = received.length;
      const page = await agent.submit(`/messages/${dmId}`, `/messages/${dmId}`, { content: '/roll sides:many' });
      expect(page.statusCode).toBe(400);
      expect(page.body).toContain('The option sides of /roll must be a whole number.');
      expect(received.length).toBe(before);
    });

    it('text that is not a command is refused (400): the bot receives commands, not messages', async () => {
      const { agent, dmId } = await dmWithDice('dmtalker');
      const count = (await messagesOf(dmId)).length;
      const page = await agent.submit(`/messages/${dmId}`, `/messages/${dmId}`, { content: 'hello there' });
      expect(page.statusCode).toBe(400);
      expect(page.body).toContain('Dice is an app’s bot: it receives commands here, not messages.');
      expect((await messagesOf(dmId)).length).toBe(count);
    });

    it('without the user install the commands are not reachable: no list, and /roll reaches nothing', async () => {
      const { agent, person, dmId } = await dmWithDice('dmremoved');
      expect(await removeUserInstall(t.services, personActingOf(person.id), bot.client.app.id)).toBe(true);
      const page = await agent.get(`/messages/${dmId}`);
      expect(page.statusCode).toBe(200);
      expect(listedCommands(page.body)).toBeUndefined();
      expect(page.body).not.toContain('Use a command of Dice');

      const before = received.length;
      const refused = await agent.submit(`/messages/${dmId}`, `/messages/${dmId}`, { content: '/roll sides:6' });
      expect(refused.statusCode).toBe(400);
      expect(received.length).toBe(before);
      expect(await messagesOf(dmId)).toEqual([]);
    });

    it('someone else’s DM is not found, and nothing is sent', async () => {
      const { dmId } = await dmWithDice('dmowner');
      const stranger = await given.signedIn(t, { username: 'dmstranger' });
      const before = received.length;
      const refused = await stranger.agent.submit('/messages', `/messages/${dmId}`, { content: '/roll sides:6' });
      expect(refused.statusCode).toBe(404);
      expect(received.length).toBe(before);
    });
  });
});
