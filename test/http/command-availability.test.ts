import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { API, ApplicationIntegrationType, InteractionContextType, PermissionFlagsBits } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import { InteractionResponseType, InteractionType } from 'discord-interactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/modules/directory/channels.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { operatorActing } from '../support/acting.js';
import { given, type TestBot } from '../support/given.js';
import type { PageAgent } from '../support/page-agent.js';
import { openDm, userInstall } from './dms.fixtures.js';
import { installWithCommands, listedCommands, serveInteractions } from './interactions.fixtures.js';

/**
 * Issue #40 §2 with Discord's command fields: `default_member_permissions` keeps a command from
 * members without those permissions (out of their `/` list, refused when typed, never sent to the
 * app), and `integration_types` / `contexts` decide whether it runs in a server channel (server
 * install) or in a DM with the bot (user install). The app registers them with @discordjs/core's
 * bulkOverwriteGlobalCommands and discord-api-types' constants, unmodified.
 */

describe('where and by whom a command may be used (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE for the loopback app)', () => {
  let t: TestApp;
  let owner: { agent: PageAgent; person: Person };
  let member: { agent: PageAgent; person: Person };
  let bot: TestBot;
  let channel: Channel;
  let appServer: Server;
  const received: string[] = [];
  let api: API;
  let registered: Array<{ name: string; default_member_permissions?: string | null; integration_types?: number[]; contexts?: number[] | null; dm_permission?: boolean }> = [];

  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    owner = await given.signedIn(t, { username: 'keeper' });
    member = await given.signedIn(t, { username: 'visitor' });
    bot = await given.bot(t, { owner: owner.person, name: 'Warden' });
    const made = await given.server(t, { owner: owner.person });
    channel = made.channels[0] as Channel;
    await addMember(t.services, operatorActing(), made.id, member.person.id);
    await installWithCommands(t, { bot, appName: 'Warden', installerId: owner.person.id, serverId: made.id });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    api = new API(new REST({ api: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api`, version: '1', retries: 0 }).setToken(bot.token));
    registered = await api.applicationCommands.bulkOverwriteGlobalCommands(bot.client.app.id, [
      { name: 'anywhere', description: 'Runs everywhere' },
      { name: 'purge', description: 'For moderators', default_member_permissions: PermissionFlagsBits.ManageMessages.toString() },
      { name: 'lockdown', description: 'For administrators', default_member_permissions: '0' },
      { name: 'dmonly', description: 'Only in a DM with the bot', contexts: [InteractionContextType.BotDM] },
      { name: 'serveronly', description: 'Only under a server install', integration_types: [ApplicationIntegrationType.GuildInstall] },
      { name: 'nodm', description: 'The older form', dm_permission: false },
    ]);
    appServer = await serveInteractions(t, bot, (req, res) => {
      const body = req.body as { type: number; data: { name: string } };
      if (body.type !== InteractionType.APPLICATION_COMMAND) return void res.status(400).end();
      received.push(body.data.name);
      res.json({ type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE, data: { content: `Ran /${body.data.name}` } });
    });
  });
  afterAll(async () => {
    if (appServer) await new Promise<void>((resolve) => appServer.close(() => resolve()));
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  const channelPath = () => `/channels/${channel.id}`;
  const listIn = async (agent: PageAgent, path: string) => (listedCommands((await agent.get(path)).body) ?? []).map((c) => c.name).sort();
  const send = (agent: PageAgent, content: string) => {
    // Past the per-person invocation bucket (5 in 10 s; not under test here).
    t.clock.advance(10_000);
    return agent.submit(channelPath(), `${channelPath()}/messages`, { content });
  };

  it('@discordjs/core reads back what it registered, in Discord\'s fields', () => {
    expect(registered).toMatchObject([
      { name: 'anywhere', default_member_permissions: null, integration_types: [0, 1], contexts: null, dm_permission: true },
      { name: 'dmonly', contexts: [1] },
      { name: 'lockdown', default_member_permissions: '0' },
      { name: 'nodm', contexts: [0], dm_permission: false },
      { name: 'purge', default_member_permissions: '8192' },
      { name: 'serveronly', integration_types: [0], contexts: null },
    ]);
  });

  it('a server channel lists, for a member, only the commands that run there and whose default_member_permissions they hold; for the owner, the moderators’ and administrators’ too', async () => {
    expect(await listIn(member.agent, channelPath())).toEqual(['anywhere', 'nodm', 'serveronly']);
    expect(await listIn(owner.agent, channelPath())).toEqual(['anywhere', 'lockdown', 'nodm', 'purge', 'serveronly']);
  });

  it('the app’s page in the portal says where each command does not run and who may use it', async () => {
    const page = await owner.agent.get(`/developers/applications/${bot.client.app.id}`);
    expect(page.statusCode).toBe(200);
    const item = (name: string) => new RegExp(`<li><code>/${name}</code>[^\\n]*?</li>`).exec(page.body)?.[0] ?? '';
    expect(item('purge')).toContain('<span class="pill">needs Manage messages</span>');
    expect(item('lockdown')).toContain('<span class="pill">administrators only</span>');
    expect(item('dmonly')).toContain('<span class="pill">not in servers</span>');
    expect(item('serveronly')).toContain('<span class="pill">not in DMs</span>');
    expect(item('nodm')).toContain('<span class="pill">not in DMs</span>');
    expect(item('anywhere')).not.toContain('pill');
  });

  it('a member typing a command they lack the permissions for is refused (403) with what it needs, and nothing reaches the app', async () => {
    const before = received.length;
    const purge = await send(member.agent, '/purge');
    expect(purge.statusCode).toBe(403);
    expect(purge.body).toContain('You need the Manage messages permission to use /purge here.');
    expect(purge.body).toContain('/purge</textarea>');
    const lockdown = await send(member.agent, '/lockdown');
    expect(lockdown.statusCode).toBe(403);
    expect(lockdown.body).toContain('Only administrators can use /lockdown here.');
    expect(received.length).toBe(before);
  });

  it('the owner (every permission) runs them: the app receives the interaction', async () => {
    expect((await send(owner.agent, '/purge')).statusCode).toBe(303);
    expect((await send(owner.agent, '/lockdown')).statusCode).toBe(303);
    expect(received.slice(-2)).toEqual(['purge', 'lockdown']);
  });

  it('a command whose contexts leave out server channels is not one there: `/dmonly` is posted as text', async () => {
    const before = received.length;
    expect((await send(owner.agent, '/dmonly now')).statusCode).toBe(303);
    expect(received.length).toBe(before);
    const history = (await t.app.inject({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages?limit=1`, headers: bot.headers })).json() as Array<{ content: string }>;
    expect(history[0]?.content).toBe('/dmonly now');
  });

  it('in a DM with the bot (a user install) only commands for user installs and that context are listed and run; the others are refused as messages to a bot', async () => {
    await userInstall(t, bot, member.person);
    const opened = await openDm(t, bot, { recipient_id: member.person.id });
    const dmPath = `/messages/${(opened.json() as { id: string }).id}`;
    expect(await listIn(member.agent, dmPath)).toEqual(['anywhere', 'dmonly', 'lockdown', 'purge']);
    t.clock.advance(10_000);
    expect((await member.agent.submit(dmPath, dmPath, { content: '/dmonly' })).statusCode).toBe(303);
    expect(received.at(-1)).toBe('dmonly');
    const before = received.length;
    for (const name of ['serveronly', 'nodm']) {
      const refused = await member.agent.submit(dmPath, dmPath, { content: `/${name}` });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain('receives commands here, not messages');
    }
    expect(received.length).toBe(before);
  });

  it('one command at a time through @discordjs/core (create, edit, delete): the composer follows each change', async () => {
    const created = await api.applicationCommands.createGlobalCommand(bot.client.app.id, { name: 'audit', description: 'Shows the log', default_member_permissions: PermissionFlagsBits.ManageGuild.toString() });
    expect(await listIn(member.agent, channelPath())).not.toContain('audit');
    expect(await listIn(owner.agent, channelPath())).toContain('audit');
    const edited = await api.applicationCommands.editGlobalCommand(bot.client.app.id, created.id, { default_member_permissions: null });
    expect(edited).toMatchObject({ id: created.id, name: 'audit', default_member_permissions: null });
    expect(await listIn(member.agent, channelPath())).toContain('audit');
    expect((await api.applicationCommands.getGlobalCommand(bot.client.app.id, created.id)).description).toBe('Shows the log');
    await api.applicationCommands.deleteGlobalCommand(bot.client.app.id, created.id);
    expect(await listIn(owner.agent, channelPath())).not.toContain('audit');
  });
});
