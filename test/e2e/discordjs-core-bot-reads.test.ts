import { API, ChannelType, type APIGuildTextChannel, type APIDMChannel, type GuildTextChannelType } from '@discordjs/core/http-only';
import { DiscordAPIError, REST } from '@discordjs/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { createBot, openDm, userInstall, type TestBot } from '../http/dms.fixtures.js';
import { serveTestApp, type ServedApp } from '../support/browser.js';
import { createPerson } from '../support/oauth-factory.js';
import { operatorActing, personActingOf } from '../support/acting.js';

/**
 * Issue #40 §4 with unmodified @discordjs/core (over @discordjs/rest, the API base set to
 * {base_url}/api and version "1"): a bot reads channels, messages (before, after, around), its
 * servers, their channels, roles and members, and users, and edits and deletes its messages.
 * Assertions are on the fields discord-api-types declares for each answer.
 */

let served: ServedApp;
let owner: Person;
let bot: TestBot;
let serverId: string;
let channelId: string;
let roleId: string;
let said: string[];

const api = () => {
  const r = new REST({ api: `${served.baseUrl}/api`, version: '1', timeout: 15_000 });
  r.setToken(bot.token);
  return new API(r);
};

async function refusal(call: Promise<unknown>): Promise<{ status: number; code: number | string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DiscordAPIError);
  return { status: (error as DiscordAPIError).status, code: (error as DiscordAPIError).code };
}

beforeAll(async () => {
  served = await serveTestApp();
  owner = await createPerson(served.t, { username: 'rowan', name: 'Rowan' });
  bot = await createBot(served.t, { name: 'Reading Bot', owner });
  const server = await createServer(served.t.services, personActingOf(owner.id), { name: 'Reading Room' });
  serverId = server.id;
  channelId = server.channels[0]?.id as string;
  const role = await createRole(served.t.services, operatorActing(), server.id, {
    name: 'Readers',
    permissions: Permission.VIEW_CHANNEL | Permission.READ_MESSAGE_HISTORY | Permission.SEND_MESSAGES | Permission.MANAGE_MESSAGES,
  });
  roleId = role.id;
  await addMember(served.t.services, operatorActing(), server.id, bot.botUserId, [role.id]);
  said = [];
  for (let i = 1; i <= 9; i += 1) said.push((await postMessage(served.t.services, personActingOf(owner.id), channelId, `line ${i}`)).id);
});
afterAll(async () => served.close());

describe('@discordjs/core reads what a bot hears (unmodified)', () => {
  it('channels.get: the server text channel', async () => {
    const channel = (await api().channels.get(channelId)) as APIGuildTextChannel<GuildTextChannelType>;
    expect(channel.id).toBe(channelId);
    expect(channel.type).toBe(ChannelType.GuildText);
    expect(channel.guild_id).toBe(serverId);
    expect(channel.name).toBe('general');
    expect(channel.permission_overwrites).toEqual([]);
  });

  it('channels.getMessages: newest first, with before, after and around; getMessage', async () => {
    const newest = await api().channels.getMessages(channelId, { limit: 3 });
    expect(newest.map((m) => m.content)).toEqual(['line 9', 'line 8', 'line 7']);
    expect(newest[0]?.author.id).toBe(owner.id);
    expect(newest[0]?.author.username).toBe('rowan');
    expect(typeof newest[0]?.timestamp).toBe('string');
    expect((await api().channels.getMessages(channelId, { before: said[4] as string, limit: 2 })).map((m) => m.content)).toEqual(['line 4', 'line 3']);
    expect((await api().channels.getMessages(channelId, { after: said[4] as string, limit: 2 })).map((m) => m.content)).toEqual(['line 7', 'line 6']);
    expect((await api().channels.getMessages(channelId, { around: said[4] as string, limit: 3 })).map((m) => m.content)).toEqual(['line 6', 'line 5', 'line 4']);
    const one = await api().channels.getMessage(channelId, said[0] as string);
    expect(one.id).toBe(said[0]);
    expect(one.content).toBe('line 1');
    expect(one.channel_id).toBe(channelId);
  });

  it('createMessage, editMessage and deleteMessage of its own; deleteMessage of a person’s with Manage messages', async () => {
    const posted = await api().channels.createMessage(channelId, { content: 'draft' });
    const edited = await api().channels.editMessage(channelId, posted.id, { content: 'final' });
    expect(edited.content).toBe('final');
    expect(edited.edited_timestamp).not.toBeNull();
    expect(edited.author.bot).toBe(true);
    await api().channels.deleteMessage(channelId, posted.id);
    await api().channels.deleteMessage(channelId, said[8] as string);
    expect(await refusal(api().channels.getMessage(channelId, said[8] as string))).toEqual({ status: 404, code: 10008 });
  });

  it('guilds.get, getChannels, getRoles and getMember; users.get', async () => {
    const guild = await api().guilds.get(serverId);
    expect(guild.id).toBe(serverId);
    expect(guild.name).toBe('Reading Room');
    expect(guild.owner_id).toBe(owner.id);
    expect(guild.roles.map((r) => r.id)).toEqual(expect.arrayContaining([serverId, roleId]));
    expect(guild.emojis).toEqual([]);

    const channels = await api().guilds.getChannels(serverId);
    expect(channels.map((c) => [c.id, c.type])).toEqual([[channelId, ChannelType.GuildText]]);

    const roles = await api().guilds.getRoles(serverId);
    const readers = roles.find((r) => r.id === roleId);
    expect(readers?.name).toBe('Readers');
    expect(typeof readers?.permissions).toBe('string');
    expect(BigInt(readers?.permissions ?? '0') & Permission.READ_MESSAGE_HISTORY).toBe(Permission.READ_MESSAGE_HISTORY);

    const member = await api().guilds.getMember(serverId, bot.botUserId);
    expect(member.user.id).toBe(bot.botUserId);
    expect(member.roles).toEqual([roleId]);
    expect(typeof member.joined_at).toBe('string');

    const user = await api().users.get(owner.id);
    expect(user.id).toBe(owner.id);
    expect(user.username).toBe('rowan');
    expect(user.global_name).toBe('Rowan');
  });

  it('a DM with a person who user-installed the app reads like a channel', async () => {
    const person = await createPerson(served.t, { username: 'sky' });
    await userInstall(served.t, bot, person);
    const dmId = ((await openDm(served.t, bot, { recipient_id: person.id })).json() as { id: string }).id;
    await postMessage(served.t.services, personActingOf(person.id), dmId, 'hello bot');
    const dm = (await api().channels.get(dmId)) as APIDMChannel;
    expect(dm.type).toBe(ChannelType.DM);
    expect(dm.recipients?.map((u) => u.id)).toEqual([person.id]);
    expect((await api().channels.getMessages(dmId)).map((m) => m.content)).toEqual(['hello bot']);
  });

  it("refusals arrive as DiscordAPIError with Discord's codes", async () => {
    const elsewhere = await createServer(served.t.services, personActingOf(owner.id), { name: 'Elsewhere' });
    expect(await refusal(api().guilds.get(elsewhere.id))).toEqual({ status: 404, code: 10004 });
    expect(await refusal(api().channels.get(elsewhere.channels[0]?.id as string))).toEqual({ status: 404, code: 10003 });
    const stranger = await createPerson(served.t);
    expect(await refusal(api().guilds.getMember(serverId, stranger.id))).toEqual({ status: 404, code: 10007 });
    expect(await refusal(api().users.get('123456789012345678'))).toEqual({ status: 404, code: 10013 });
  });
});
