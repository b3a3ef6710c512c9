import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { API, InteractionContextType, Routes, type RESTPutAPIApplicationGuildCommandsResult } from '@discordjs/core';
import { DiscordAPIError, REST } from '@discordjs/rest';
import { InteractionResponseType, InteractionType } from 'discord-interactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/modules/directory/channels.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { given, type TestBot } from '../support/given.js';
import type { PageAgent } from '../support/page-agent.js';
import { installWithCommands, listedCommands, serveInteractions } from './interactions.fixtures.js';

/**
 * Issue #40 §2 with Discord's guild commands: an app registers commands for one server it is
 * installed in (`/applications/{id}/guilds/{guild_id}/commands`, which the discord.js guide's
 * deploy script uses), through @discordjs/core unmodified. They are offered and run in that
 * server only, a guild command replacing a global one of the same name there, and the interaction
 * says which server the command is registered for (`data.guild_id`).
 */

interface ReceivedCommand {
  id: string;
  name: string;
  guild_id?: string;
}

describe('guild commands (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE for the loopback app)', () => {
  let t: TestApp;
  let owner: { agent: PageAgent; person: Person };
  let bot: TestBot;
  let home: { id: string; channel: Channel };
  let other: { id: string; channel: Channel };
  let elsewhere: string;
  let appServer: Server;
  let api: API;
  const received: ReceivedCommand[] = [];

  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    owner = await given.signedIn(t, { username: 'keeper' });
    bot = await given.bot(t, { owner: owner.person, name: 'Warden' });
    const made = [await given.server(t, { owner: owner.person, name: 'Home' }), await given.server(t, { owner: owner.person, name: 'Other' })];
    home = { id: made[0]!.id, channel: made[0]!.channels[0] as Channel };
    other = { id: made[1]!.id, channel: made[1]!.channels[0] as Channel };
    elsewhere = (await given.server(t, { owner: owner.person, name: 'Elsewhere' })).id;
    for (const server of [home, other]) await installWithCommands(t, { bot, appName: 'Warden', installerId: owner.person.id, serverId: server.id });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    api = new API(new REST({ api: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api`, version: '1', retries: 0 }).setToken(bot.token));
    await api.applicationCommands.bulkOverwriteGlobalCommands(bot.client.app.id, [
      { name: 'ping', description: 'The global one' },
      { name: 'help', description: 'Global help' },
    ]);
    appServer = await serveInteractions(t, bot, (req, res) => {
      const body = req.body as { type: number; data: ReceivedCommand };
      if (body.type !== InteractionType.APPLICATION_COMMAND) return void res.status(400).end();
      received.push(body.data);
      res.json({ type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE, data: { content: `Ran /${body.data.name}` } });
    });
  });
  afterAll(async () => {
    if (appServer) await new Promise<void>((resolve) => appServer.close(() => resolve()));
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  const listIn = async (channel: Channel) => (listedCommands((await owner.agent.get(`/channels/${channel.id}`)).body) ?? []).map((c) => `${c.name}: ${c.description}`).sort();
  const send = (channel: Channel, content: string) => {
    // Past the per-person invocation bucket (5 in 10 s; not under test here).
    t.clock.advance(10_000);
    return owner.agent.submit(`/channels/${channel.id}`, `/channels/${channel.id}/messages`, { content });
  };

  it('bulkOverwriteGuildCommands registers commands for one server: they carry its guild_id, and the global list is unchanged', async () => {
    // discord-api-types leaves `contexts` out of a guild command's type; a JavaScript app may still send it.
    const setup = { name: 'setup', description: 'Set this server up', contexts: [InteractionContextType.BotDM] };
    const guildCommands = await api.applicationCommands.bulkOverwriteGuildCommands(bot.client.app.id, home.id, [{ name: 'ping', description: 'The server one' }, setup]);
    expect(guildCommands).toMatchObject([
      { name: 'ping', guild_id: home.id, application_id: bot.client.app.id },
      // Discord: contexts and integration types are for global commands; a guild command runs in its server.
      { name: 'setup', guild_id: home.id, contexts: [0], integration_types: [0] },
    ]);
    expect((await api.applicationCommands.getGuildCommands(bot.client.app.id, home.id)).map((c) => c.name)).toEqual(['ping', 'setup']);
    const globals = await api.applicationCommands.getGlobalCommands(bot.client.app.id);
    expect(globals.map((c) => c.name)).toEqual(['help', 'ping']);
    expect(globals.every((c) => !('guild_id' in c))).toBe(true);
    expect(await api.applicationCommands.getGuildCommands(bot.client.app.id, other.id)).toEqual([]);
  });

  it('the server’s composer offers its guild commands, the server one replacing the global /ping; another server sees the global ones only', async () => {
    expect(await listIn(home.channel)).toEqual(['help: Global help', 'ping: The server one', 'setup: Set this server up']);
    expect(await listIn(other.channel)).toEqual(['help: Global help', 'ping: The global one']);
  });

  it('the app’s page in the portal lists its guild commands under their server, apart from the global ones', async () => {
    const page = (await owner.agent.get(`/developers/applications/${bot.client.app.id}`)).body;
    const [global, perServer] = page.split('<h4>In one server</h4>');
    expect(global).toContain('<code>/help</code>');
    expect(global).not.toContain('<code>/setup</code>');
    expect(perServer).toContain(`<strong>Home</strong> <span class="muted">(${home.id})</span>`);
    expect(perServer).toMatch(/<code>\/ping<\/code> <span class="muted">The server one<\/span><\/li>/);
    expect(perServer).toMatch(/<code>\/setup<\/code> <span class="muted">Set this server up<\/span><\/li>/);
    expect(perServer).not.toContain('<strong>Other</strong>');
  });

  it('the server’s Integrations page lists its guild commands with the global ones; another server’s does not', async () => {
    const listed = async (serverId: string) => [...(await owner.agent.get(`/servers/${serverId}/settings/integrations`)).body.matchAll(/<li><code>\/([^<]+)<\/code> <span class="muted">([^<]*)<\/span><\/li>/g)].map((m) => `${m[1]}: ${m[2]}`).sort();
    expect(await listed(home.id)).toEqual(['help: Global help', 'ping: The server one', 'setup: Set this server up']);
    expect(await listed(other.id)).toEqual(['help: Global help', 'ping: The global one']);
  });

  it('a typed guild command runs there with data.guild_id; the same name in another server runs the global one', async () => {
    expect((await send(home.channel, '/setup')).statusCode).toBe(303);
    expect((await send(home.channel, '/ping')).statusCode).toBe(303);
    expect((await send(other.channel, '/ping')).statusCode).toBe(303);
    const guildPing = (await api.applicationCommands.getGuildCommands(bot.client.app.id, home.id)).find((c) => c.name === 'ping');
    const globalPing = (await api.applicationCommands.getGlobalCommands(bot.client.app.id)).find((c) => c.name === 'ping');
    expect(received.slice(-3)).toEqual([
      expect.objectContaining({ name: 'setup', guild_id: home.id }),
      { id: guildPing?.id, name: 'ping', type: 1, guild_id: home.id },
      { id: globalPing?.id, name: 'ping', type: 1 },
    ]);
    const before = received.length;
    expect((await send(other.channel, '/setup')).statusCode).toBe(303);
    expect(received.length).toBe(before);
  });

  it('one guild command at a time (create, get, edit, delete), names unique per server: the same name may be registered in another server', async () => {
    const created = await api.applicationCommands.createGuildCommand(bot.client.app.id, other.id, { name: 'setup', description: 'Set the other server up' });
    expect(created).toMatchObject({ name: 'setup', guild_id: other.id });
    expect((await api.applicationCommands.getGuildCommand(bot.client.app.id, other.id, created.id)).description).toBe('Set the other server up');
    const edited = await api.applicationCommands.editGuildCommand(bot.client.app.id, other.id, created.id, { description: 'Edited' });
    expect(edited).toMatchObject({ id: created.id, description: 'Edited', guild_id: other.id });
    expect(await listIn(other.channel)).toContain('setup: Edited');
    // The command belongs to the other server: not found through this one's routes (Discord's 10063).
    await expect(api.applicationCommands.getGuildCommand(bot.client.app.id, home.id, created.id)).rejects.toMatchObject({ status: 404, code: 10063 });
    await expect(api.applicationCommands.getGlobalCommand(bot.client.app.id, created.id)).rejects.toMatchObject({ status: 404, code: 10063 });
    await api.applicationCommands.deleteGuildCommand(bot.client.app.id, other.id, created.id);
    expect(await listIn(other.channel)).not.toContain('setup: Edited');
    expect((await api.applicationCommands.getGuildCommands(bot.client.app.id, home.id)).map((c) => c.name)).toEqual(['ping', 'setup']);
  });

  it('a server the app is not installed in, or that does not exist, is refused (403 50001) and nothing is stored', async () => {
    for (const guildId of [elsewhere, '123456789012345678', 'not-a-server']) {
      const error = await api.applicationCommands.bulkOverwriteGuildCommands(bot.client.app.id, guildId, [{ name: 'x', description: 'y' }]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DiscordAPIError);
      expect(error).toMatchObject({ status: 403, code: 50001 });
    }
    const listed = await t.app.inject({ method: 'GET', url: `/api/v1/applications/${bot.client.app.id}/guilds/${elsewhere}/commands`, headers: bot.headers });
    expect(listed.statusCode).toBe(403);
    // Issue #40 §4: every bot route answers Discord's rate-limit headers, refusals included.
    expect(listed.headers['x-ratelimit-bucket']).toMatch(/^[0-9a-f]{32}$/);
    const stored = await t.services.db.selectFrom('application_commands').select('id').where('guild_id', '=', elsewhere).execute();
    expect(stored).toEqual([]);
  });

  it('another application’s bot cannot read or write this app’s guild commands (403 50001)', async () => {
    const stranger = await given.bot(t, { owner: owner.person, name: 'Stranger' });
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/applications/${bot.client.app.id}/guilds/${home.id}/commands`, headers: stranger.headers });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 50001 });
  });

  it('a bulk overwrite of a server’s commands leaves the global ones and other servers’ alone; an empty list removes them', async () => {
    await api.applicationCommands.createGuildCommand(bot.client.app.id, other.id, { name: 'only-other', description: 'Kept' });
    expect(await api.applicationCommands.bulkOverwriteGuildCommands(bot.client.app.id, home.id, [])).toEqual([]);
    expect(await listIn(home.channel)).toEqual(['help: Global help', 'ping: The global one']);
    expect((await api.applicationCommands.getGuildCommands(bot.client.app.id, other.id)).map((c) => c.name)).toEqual(['only-other']);
    expect((await api.applicationCommands.getGlobalCommands(bot.client.app.id)).map((c) => c.name)).toEqual(['help', 'ping']);
  });

  it('the discord.js guide’s deploy script (REST.put on Routes.applicationGuildCommands) registers them', async () => {
    const rest = new REST({ api: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api`, version: '1', retries: 0 }).setToken(bot.token);
    const stored = (await rest.put(Routes.applicationGuildCommands(bot.client.app.id, other.id), { body: [{ name: 'deployed', description: 'Replies with Pong!' }] })) as RESTPutAPIApplicationGuildCommandsResult;
    expect(stored).toMatchObject([{ name: 'deployed', guild_id: other.id }]);
    expect(await listIn(other.channel)).toContain('deployed: Replies with Pong!');
  });
});
