import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { createChannel, getChannel } from '../../src/modules/directory/channels.service.js';
import { addMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole, updateRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import type { ChannelEvent } from '../../src/realtime/channel-events.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { statementsDuring } from '../support/database.js';
import { createPerson } from '../support/oauth-factory.js';
import { botPost, createBot, openDm, userInstall, type TestBot } from './dms.fixtures.js';
import { MESSAGE_NEUTRAL, userJson } from '../support/discord-resources.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';
import { postInteractionMessage } from '../../src/modules/messages/interaction-messages.service.js';

/**
 * What bots read (issue #40 §4): Discord's channel, message, guild, role, member and user routes
 * with `Authorization: Bot <token>`, authorized by the bot's roles in that server.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const READ = Permission.VIEW_CHANNEL | Permission.READ_MESSAGE_HISTORY;

interface Setup {
  bot: TestBot;
  owner: Person;
  serverId: string;
  channelId: string;
  roleId: string | undefined;
}

/** A server whose @everyone holds `everyone`, with the bot a member holding a role with `role` (none when undefined). */
async function serverWithBot(input: { everyone: bigint; role?: bigint; name?: string }): Promise<Setup> {
  const owner = await createPerson(t);
  const server = await createServer(t.services, personActingOf(owner.id), { name: input.name ?? 'Workshop' });
  await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: input.everyone });
  const bot = await createBot(t, { name: 'Reader' });
  await addMember(t.services, operatorActing(), server.id, bot.botUserId);
  let roleId: string | undefined;
  if (input.role !== undefined) {
    const role = await createRole(t.services, operatorActing(), server.id, { name: 'Bots', permissions: input.role, color: 0x3366ff });
    await setMemberRoles(t.services, operatorActing(), server.id, bot.botUserId, [role.id]);
    roleId = role.id;
  }
  return { bot, owner, serverId: server.id, channelId: server.channels[0]?.id as string, roleId };
}

function get(bot: TestBot, url: string) {
  return t.app.inject({ method: 'GET', url, headers: bot.headers });
}

/** `n` messages by the person, one millisecond apart so their ids are in order; their ids, oldest first. */
async function say(person: Person, channelId: string, n: number, prefix = 'm'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 1; i <= n; i += 1) {
    t.clock.advance(1);
    ids.push((await postMessage(t.services, personActingOf(person.id), channelId, `${prefix}${i}`)).id);
  }
  return ids;
}

const contents = (res: { json(): unknown }) => (res.json() as Array<{ content: string }>).map((m) => m.content);

describe('GET /api/v1/channels/{id}', () => {
  it("answers a server text channel as Discord's channel object (type 0)", async () => {
    const { bot, serverId, channelId } = await serverWithBot({ everyone: READ });
    const res = await get(bot, `/api/v1/channels/${channelId}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json()).toEqual({
      id: channelId,
      type: 0,
      guild_id: serverId,
      name: 'general',
      topic: null,
      position: 0,
      permission_overwrites: [],
      nsfw: false,
      parent_id: null,
      last_message_id: null,
      rate_limit_per_user: 0,
      flags: 0,
    });
  });

  it('answers a DM between the bot and a person as type 1 with the person as recipient', async () => {
    const person = await createPerson(t, { name: 'Dana' });
    const bot = await createBot(t);
    await userInstall(t, bot, person);
    const dmId = ((await openDm(t, bot, { recipient_id: person.id })).json() as { id: string }).id;
    const res = await get(bot, `/api/v1/channels/${dmId}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: dmId,
      type: 1,
      last_message_id: null,
      flags: 0,
      recipients: [userJson({ id: person.id, username: person.username, global_name: 'Dana', avatar_url: null })],
    });
  });

  it('an unknown or malformed id, another server’s channel and someone else’s DM are 404 10003; a channel it may not view is 403 50001', async () => {
    const { bot, channelId } = await serverWithBot({ everyone: 0n });
    const other = await serverWithBot({ everyone: READ, name: 'Elsewhere' });
    for (const id of ['123456789012345678', 'abc', other.channelId]) {
      const res = await get(bot, `/api/v1/channels/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ code: 10003, message: 'Unknown Channel' });
    }
    const person = await createPerson(t);
    const otherBot = await createBot(t);
    await userInstall(t, otherBot, person);
    const foreignDm = ((await openDm(t, otherBot, { recipient_id: person.id })).json() as { id: string }).id;
    expect((await get(bot, `/api/v1/channels/${foreignDm}`)).json()).toMatchObject({ code: 10003 });

    const hidden = await get(bot, `/api/v1/channels/${channelId}`);
    expect(hidden.statusCode).toBe(403);
    expect(hidden.json()).toEqual({ code: 50001, message: 'Missing Access' });
  });

  it('needs bot credentials: none, a Bearer token or a wrong token is 401', async () => {
    const { channelId } = await serverWithBot({ everyone: READ });
    for (const authorization of [undefined, 'Bearer abc', 'Bot gh_bot_nope']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/channels/${channelId}`, headers: authorization === undefined ? {} : { authorization } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ code: 0, message: '401: Unauthorized' });
    }
  });
});

describe('GET /api/v1/channels/{id}/messages', () => {
  it("answers the newest 50 by default, newest first, as Discord's message objects with their authors", async () => {
    const { bot, owner, channelId } = await serverWithBot({ everyone: READ | Permission.SEND_MESSAGES });
    const ids = await say(owner, channelId, 55);
    const res = await get(bot, `/api/v1/channels/${channelId}/messages`);
    expect(res.statusCode).toBe(200);
    const page = res.json() as Array<Record<string, unknown>>;
    expect(page.map((m) => m['id'])).toEqual(ids.slice(5).reverse());
    expect(page[0]).toEqual({
      ...MESSAGE_NEUTRAL,
      id: ids[54],
      channel_id: channelId,
      content: 'm55',
      embeds: [],
      author: userJson({ id: owner.id, username: owner.username, global_name: owner.name, avatar_url: owner.avatarUrl }),
      timestamp: expect.any(String),
      edited_timestamp: null,
    });
  });

  it('pages with before, after and around (limit 1–100) and keeps newest first', async () => {
    const { bot, owner, channelId } = await serverWithBot({ everyone: READ });
    const ids = await say(owner, channelId, 20);
    const url = `/api/v1/channels/${channelId}/messages`;
    expect(contents(await get(bot, `${url}?limit=3`))).toEqual(['m20', 'm19', 'm18']);
    expect(contents(await get(bot, `${url}?before=${ids[10]}&limit=3`))).toEqual(['m10', 'm9', 'm8']);
    expect(contents(await get(bot, `${url}?after=${ids[10]}&limit=3`))).toEqual(['m14', 'm13', 'm12']);
    expect(contents(await get(bot, `${url}?around=${ids[10]}&limit=5`))).toEqual(['m13', 'm12', 'm11', 'm10', 'm9']);
    expect(contents(await get(bot, `${url}?after=${ids[19]}`))).toEqual([]);
    expect(contents(await get(bot, `${url}?limit=100`))).toHaveLength(20);
  });

  it('refuses a bad limit, a malformed id and two anchors at once with 400 50035, at the field', async () => {
    const { bot, owner, channelId } = await serverWithBot({ everyone: READ });
    const [id] = await say(owner, channelId, 1);
    const url = `/api/v1/channels/${channelId}/messages`;
    for (const query of ['limit=0', 'limit=101', 'limit=ten', 'before=abc', `before=${id}&after=${id}`]) {
      const res = await get(bot, `${url}?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toMatchObject({ code: 50035 });
    }
    expect((await get(bot, `${url}?before=${id}&after=${id}`)).json()).toMatchObject({ errors: { after: { _errors: [{ code: 'ONE_OF' }] } } });
  });

  it('without Read message history the list is empty, as on Discord; without View channel it is 403 50001', async () => {
    const viewOnly = await serverWithBot({ everyone: Permission.VIEW_CHANNEL });
    await say(viewOnly.owner, viewOnly.channelId, 2);
    const res = await get(viewOnly.bot, `/api/v1/channels/${viewOnly.channelId}/messages`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);

    const blind = await serverWithBot({ everyone: 0n, role: Permission.READ_MESSAGE_HISTORY });
    expect((await get(blind.bot, `/api/v1/channels/${blind.channelId}/messages`)).json()).toEqual({ code: 50001, message: 'Missing Access' });
  });

  it('a role granting View channel and Read message history is enough when @everyone has neither', async () => {
    const { bot, owner, channelId } = await serverWithBot({ everyone: 0n, role: READ });
    await say(owner, channelId, 2);
    expect(contents(await get(bot, `/api/v1/channels/${channelId}/messages`))).toEqual(['m2', 'm1']);
  });

  it("shows a webhook's message authored by the webhook and the bot's own as a bot with its application", async () => {
    const { bot, owner, channelId } = await serverWithBot({ everyone: READ | Permission.SEND_MESSAGES });
    const channel = await getChannel(t.services, channelId);
    if (!channel) throw new Error('no channel');
    const issued = await createWebhook(t.services, personActingOf(owner.id), channel, { name: 'Deploys' });
    t.clock.advance(1);
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${issued.webhook.id}/${issued.token}?wait=true`, payload: { content: 'deployed' } })).statusCode).toBe(200);
    t.clock.advance(1);
    expect((await botPost(t, bot, channelId, { content: 'noted' })).statusCode).toBe(200);
    const [mine, hook] = (await get(bot, `/api/v1/channels/${channelId}/messages?limit=2`)).json() as Array<Record<string, unknown>>;
    expect(mine).toMatchObject({ content: 'noted', application_id: bot.client.app.id, author: { id: bot.botUserId, bot: true } });
    expect(mine).not.toHaveProperty('webhook_id');
    expect(hook).toMatchObject({ content: 'deployed', webhook_id: issued.webhook.id, author: { id: issued.webhook.id, username: 'Deploys', global_name: null, bot: true } });
  });

  it("shows an app's answer to a command as Discord does: type 20, webhook_id the application, interaction_metadata and interaction naming who used which command", async () => {
    const { bot, owner, channelId } = await serverWithBot({ everyone: READ | Permission.SEND_MESSAGES });
    await say(owner, channelId, 1, 'before');
    t.clock.advance(1);
    const acting = actingOf({ kind: 'bot', id: bot.botUserId, applicationId: bot.client.app.id } as const);
    const interactionId = t.services.ids.next();
    const answered = await postInteractionMessage(t.services, acting, channelId, { content: 'You rolled 4', embeds: [], loading: false }, { interactionId, type: 2, userId: owner.id, commandName: 'roll' });
    t.clock.advance(1);
    const thinking = await postInteractionMessage(t.services, acting, channelId, { content: '', embeds: [], loading: true }, { interactionId: t.services.ids.next(), type: 2, userId: owner.id, commandName: 'think' });
    const invoker = userJson({ id: owner.id, username: owner.username, global_name: owner.name, avatar_url: null });
    const expected = {
      id: answered.message.id,
      type: 20,
      content: 'You rolled 4',
      webhook_id: bot.client.app.id,
      application_id: bot.client.app.id,
      flags: 0,
      author: { id: bot.botUserId, bot: true },
      interaction_metadata: { id: interactionId, type: 2, name: 'roll', command_type: 1, user: invoker, authorizing_integration_owners: {} },
      interaction: { id: interactionId, type: 2, name: 'roll', user: invoker },
    };
    const page = (await get(bot, `/api/v1/channels/${channelId}/messages`)).json() as Array<Record<string, unknown>>;
    expect(page.map((m) => m.type)).toEqual([20, 20, 0]);
    expect(page[0]).toMatchObject({ id: thinking.message.id, flags: 128, interaction_metadata: { name: 'think', user: { id: owner.id } } });
    expect(page[1]).toMatchObject(expected);
    expect(page[2]).not.toHaveProperty('interaction_metadata');
    expect(page[2]).not.toHaveProperty('interaction');
    const one = await get(bot, `/api/v1/channels/${channelId}/messages/${answered.message.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject(expected);
    const edited = await t.app.inject({ method: 'PATCH', url: `/api/v1/channels/${channelId}/messages/${answered.message.id}`, headers: bot.headers, payload: { content: 'You rolled 5' } });
    expect(edited.statusCode).toBe(200);
    expect(edited.json()).toMatchObject({ ...expected, content: 'You rolled 5' });
  });

  it('a page costs the same statements whatever its size and however many authors wrote it: no query per message or author', async () => {
    const { bot, owner, serverId, channelId } = await serverWithBot({ everyone: READ | Permission.SEND_MESSAGES });
    const others = [owner, await createPerson(t), await createPerson(t)];
    for (const person of others.slice(1)) await addMember(t.services, operatorActing(), serverId, person.id);
    for (let i = 0; i < 30; i += 1) {
      t.clock.advance(1);
      await postMessage(t.services, personActingOf((others[i % 3] as Person).id), channelId, `n${i}`);
    }
    const cost = async (limit: number) => {
      const { result, statements } = await statementsDuring(t.database.handle, () => get(bot, `/api/v1/channels/${channelId}/messages?limit=${limit}`));
      expect((result.json() as unknown[]).length).toBe(limit);
      return statements.length;
    };
    await cost(1);
    const one = await cost(1);
    expect(await cost(30)).toBe(one);
  });

  it('reads a DM with a person who user-installed the app', async () => {
    const person = await createPerson(t);
    const bot = await createBot(t);
    await userInstall(t, bot, person);
    const dmId = ((await openDm(t, bot, { recipient_id: person.id })).json() as { id: string }).id;
    t.clock.advance(1);
    await botPost(t, bot, dmId, { content: 'hello' });
    t.clock.advance(1);
    await postMessage(t.services, personActingOf(person.id), dmId, 'hi bot');
    expect(contents(await get(bot, `/api/v1/channels/${dmId}/messages`))).toEqual(['hi bot', 'hello']);
  });
});

describe('GET, PATCH and DELETE /api/v1/channels/{id}/messages/{id}', () => {
  it('gets one message; one of another channel or none is 404 10008; without Read message history 403 50013', async () => {
    const { bot, owner, serverId, channelId } = await serverWithBot({ everyone: READ });
    const [id] = await say(owner, channelId, 1);
    const res = await get(bot, `/api/v1/channels/${channelId}/messages/${id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, content: 'm1', channel_id: channelId });

    const second = await createChannel(t.services, operatorActing(), serverId, { name: 'second' });
    for (const url of [`/api/v1/channels/${second.id}/messages/${id}`, `/api/v1/channels/${channelId}/messages/123456789012345678`, `/api/v1/channels/${channelId}/messages/x`]) {
      expect((await get(bot, url)).json()).toEqual({ code: 10008, message: 'Unknown Message' });
    }
    await updateRole(t.services, operatorActing(), serverId, serverId, { permissions: Permission.VIEW_CHANNEL });
    expect((await get(bot, `/api/v1/channels/${channelId}/messages/${id}`)).json()).toMatchObject({ code: 50013 });
  });

  it('edits its own message (content and embeds; absent fields stay) and live views hear it', async () => {
    const { bot, channelId } = await serverWithBot({ everyone: READ | Permission.SEND_MESSAGES | Permission.EMBED_LINKS });
    const id = ((await botPost(t, bot, channelId, { content: 'draft' })).json() as { id: string }).id;
    t.clock.advance(1000);
    const events: ChannelEvent[] = [];
    const stop = t.services.events.subscribe(channelId, (e) => events.push(e));
    const res = await t.app.inject({ method: 'PATCH', url: `/api/v1/channels/${channelId}/messages/${id}`, headers: bot.headers, payload: { embeds: [{ title: 'Build' }] } });
    stop();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, content: 'draft', embeds: [{ type: 'rich', title: 'Build' }], edited_timestamp: new Date(t.clock.now()).toISOString() });
    expect((await get(bot, `/api/v1/channels/${channelId}/messages/${id}`)).json()).toMatchObject({ content: 'draft', embeds: [{ title: 'Build' }] });
    expect(events).toEqual([{ type: 'message_update', channelId, messageId: id }]);
  });

  it("refuses to edit someone else's message (403 50005), to empty its own (400 50006) or an oversized content (50035); nothing changes", async () => {
    const { bot, owner, channelId } = await serverWithBot({ everyone: READ | Permission.SEND_MESSAGES });
    const [theirs] = await say(owner, channelId, 1);
    const mine = ((await botPost(t, bot, channelId, { content: 'kept' })).json() as { id: string }).id;
    const patch = (id: string | undefined, payload: unknown) => t.app.inject({ method: 'PATCH', url: `/api/v1/channels/${channelId}/messages/${id}`, headers: bot.headers, payload: payload as object });
    expect((await patch(theirs, { content: 'hijack' })).json()).toEqual({ code: 50005, message: 'Cannot edit a message authored by another user' });
    expect((await patch(mine, { content: '' })).json()).toMatchObject({ code: 50006 });
    expect((await patch(mine, { content: 'x'.repeat(2001) })).json()).toMatchObject({ code: 50035, errors: { content: {} } });
    expect(contents(await get(bot, `/api/v1/channels/${channelId}/messages`))).toEqual(['kept', 'm1']);
  });

  it('adding embeds in an edit needs Embed links (403 50013); a message of another channel is 404 10008 to PATCH and DELETE', async () => {
    const { bot, serverId, channelId } = await serverWithBot({ everyone: READ | Permission.SEND_MESSAGES });
    const id = ((await botPost(t, bot, channelId, { content: 'plain' })).json() as { id: string }).id;
    const embeds = await t.app.inject({ method: 'PATCH', url: `/api/v1/channels/${channelId}/messages/${id}`, headers: bot.headers, payload: { embeds: [{ title: 'x' }] } });
    expect(embeds.json()).toEqual({ code: 50013, message: 'Missing Permissions' });
    const second = await createChannel(t.services, operatorActing(), serverId, { name: 'second' });
    for (const method of ['PATCH', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: `/api/v1/channels/${second.id}/messages/${id}`, headers: bot.headers, ...(method === 'PATCH' ? { payload: { content: 'moved' } } : {}) });
      expect(res.json(), method).toEqual({ code: 10008, message: 'Unknown Message' });
    }
    expect((await get(bot, `/api/v1/channels/${channelId}/messages/${id}`)).json()).toMatchObject({ content: 'plain', embeds: [], edited_timestamp: null });
  });

  it("deletes its own message (204); someone else's needs Manage messages (403 50013), with it 204 and audited", async () => {
    const { bot, owner, serverId, channelId, roleId } = await serverWithBot({ everyone: READ | Permission.SEND_MESSAGES, role: 0n });
    const [theirs] = await say(owner, channelId, 1);
    const mine = ((await botPost(t, bot, channelId, { content: 'mine' })).json() as { id: string }).id;
    const del = (id: string | undefined) => t.app.inject({ method: 'DELETE', url: `/api/v1/channels/${channelId}/messages/${id}`, headers: bot.headers });
    const own = await del(mine);
    expect(own.statusCode).toBe(204);
    expect(own.body).toBe('');
    expect((await del(mine)).json()).toMatchObject({ code: 10008 });
    expect((await del(theirs)).json()).toEqual({ code: 50013, message: 'Missing Permissions' });
    expect(contents(await get(bot, `/api/v1/channels/${channelId}/messages`))).toEqual(['m1']);

    await updateRole(t.services, operatorActing(), serverId, roleId as string, { permissions: Permission.MANAGE_MESSAGES });
    expect((await del(theirs)).statusCode).toBe(204);
    expect(contents(await get(bot, `/api/v1/channels/${channelId}/messages`))).toEqual([]);
    // Only the moderator's delete is in the server's audit log (Discord's MESSAGE_DELETE), by the bot.
    const audit = await t.services.db.selectFrom('audit_events').select(['action', 'actor_id', 'target_id']).where('action', '=', 'message.deleted').where('server_id', '=', serverId).execute();
    expect(audit.map((a) => ({ action: a.action, actor_id: String(a.actor_id) }))).toEqual([{ action: 'message.deleted', actor_id: bot.botUserId }]);
  });

  it("in a DM the bot deletes only its own messages, not the person's", async () => {
    const person = await createPerson(t);
    const bot = await createBot(t);
    await userInstall(t, bot, person);
    const dmId = ((await openDm(t, bot, { recipient_id: person.id })).json() as { id: string }).id;
    const theirs = (await postMessage(t.services, personActingOf(person.id), dmId, 'private')).id;
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/channels/${dmId}/messages/${theirs}`, headers: bot.headers });
    expect(res.json()).toMatchObject({ code: 50013 });
  });
});

describe('GET /api/v1/guilds/{id}, its channels, roles and members; GET /api/v1/users/{id}', () => {
  it("answers the server as Discord's guild object with its roles", async () => {
    const { bot, owner, serverId, roleId } = await serverWithBot({ everyone: READ, role: Permission.SEND_MESSAGES });
    const res = await get(bot, `/api/v1/guilds/${serverId}`);
    expect(res.statusCode).toBe(200);
    const guild = res.json() as Record<string, unknown>;
    expect(guild).toMatchObject({ id: serverId, name: 'Workshop', icon: null, icon_hash: null, owner_id: owner.id, mfa_level: 0, features: [], emojis: [], stickers: [], preferred_locale: 'en-US' });
    expect(guild['roles']).toEqual(
      expect.arrayContaining([
        { id: serverId, name: '@everyone', color: 0, hoist: false, icon: null, unicode_emoji: null, position: 0, permissions: READ.toString(), managed: false, mentionable: false, flags: 0 },
        expect.objectContaining({ id: roleId, name: 'Bots', color: 0x3366ff, permissions: Permission.SEND_MESSAGES.toString(), managed: false }),
      ]),
    );
  });

  it('lists the channels the bot can view: all with View channel, none without', async () => {
    const { bot, serverId, channelId } = await serverWithBot({ everyone: READ });
    const second = await createChannel(t.services, operatorActing(), serverId, { name: 'second', topic: 'Two' });
    const res = await get(bot, `/api/v1/guilds/${serverId}/channels`);
    expect(res.statusCode).toBe(200);
    expect((res.json() as Array<Record<string, unknown>>).map((c) => [c['id'], c['name'], c['topic'], c['type'], c['guild_id']])).toEqual([
      [channelId, 'general', null, 0, serverId],
      [second.id, 'second', 'Two', 0, serverId],
    ]);
    await updateRole(t.services, operatorActing(), serverId, serverId, { permissions: 0n });
    expect((await get(bot, `/api/v1/guilds/${serverId}/channels`)).json()).toEqual([]);
  });

  it('lists the roles, the managed role of a bot install marked managed', async () => {
    const { bot, serverId } = await serverWithBot({ everyone: READ });
    const res = await get(bot, `/api/v1/guilds/${serverId}/roles`);
    expect(res.statusCode).toBe(200);
    expect((res.json() as Array<{ id: string }>).map((r) => r.id)).toContain(serverId);
  });

  it('gets a member with their user, role ids and join time; a non-member is 404 10007', async () => {
    const { bot, owner, serverId, roleId } = await serverWithBot({ everyone: READ, role: 0n });
    const ownerRes = await get(bot, `/api/v1/guilds/${serverId}/members/${owner.id}`);
    expect(ownerRes.statusCode).toBe(200);
    expect(ownerRes.json()).toEqual({
      user: userJson({ id: owner.id, username: owner.username, global_name: owner.name, avatar_url: owner.avatarUrl }),
      nick: null,
      avatar: null,
      banner: null,
      roles: [],
      joined_at: expect.any(String),
      premium_since: null,
      deaf: false,
      mute: false,
      flags: 0,
      pending: false,
      communication_disabled_until: null,
    });
    expect((await get(bot, `/api/v1/guilds/${serverId}/members/${bot.botUserId}`)).json()).toMatchObject({ user: { id: bot.botUserId, bot: true }, roles: [roleId] });
    const stranger = await createPerson(t);
    for (const id of [stranger.id, '123456789012345678', 'nope']) {
      const res = await get(bot, `/api/v1/guilds/${serverId}/members/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ code: 10007, message: 'Unknown Member' });
    }
  });

  it('a server the bot is not in, or none, is 404 10004 on every guild route', async () => {
    const { bot } = await serverWithBot({ everyone: READ });
    const other = await serverWithBot({ everyone: READ, name: 'Elsewhere' });
    for (const id of [other.serverId, '123456789012345678', 'x']) {
      for (const suffix of ['', '/channels', '/roles', `/members/${other.owner.id}`]) {
        const res = await get(bot, `/api/v1/guilds/${id}${suffix}`);
        expect(res.statusCode, `${id}${suffix}`).toBe(404);
        expect(res.json()).toEqual({ code: 10004, message: 'Unknown Server' });
      }
    }
  });

  it("gets anyone's public user object, never the e-mail address; an unknown user is 404 10013", async () => {
    const bot = await createBot(t);
    const person = await createPerson(t, { name: 'Erin', email: 'erin@example.com' });
    const res = await get(bot, `/api/v1/users/${person.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(userJson({ id: person.id, username: person.username, global_name: 'Erin', avatar_url: null }));
    expect(res.body).not.toContain('erin@example.com');
    for (const id of ['123456789012345678', 'x']) expect((await get(bot, `/api/v1/users/${id}`)).json()).toEqual({ code: 10013, message: 'Unknown User' });
    expect((await get(bot, '/api/v1/users/@me')).json()).toMatchObject({ id: bot.botUserId, bot: true });
  });
});

describe("rate limits (Discord's X-RateLimit headers, per route bucket and a global 50 per second per bot)", () => {
  it('every answer carries the route bucket’s headers, refusals included', async () => {
    const { bot, serverId, channelId } = await serverWithBot({ everyone: READ });
    for (const url of [`/api/v1/channels/${channelId}`, `/api/v1/guilds/${serverId}`, '/api/v1/guilds/123456789012345678', `/api/v1/channels/${channelId}/messages?limit=0`]) {
      const res = await get(bot, url);
      expect(res.headers['x-ratelimit-limit'], url).toBe('50');
      expect(res.headers['x-ratelimit-remaining'], url).toBe('49');
      expect(res.headers['x-ratelimit-reset-after'], url).toBe('5.000');
      expect(res.headers['x-ratelimit-reset'], url).toBe(((t.clock.now() + 5000) / 1000).toFixed(3));
      expect(res.headers['x-ratelimit-bucket'], url).toMatch(/^[0-9a-f]{32}$/);
    }
  });

  it("posting: the sixth message in 5 s in one channel is 429 with Discord's body; another channel has its own bucket; the window's end refills it", async () => {
    const { bot, serverId, channelId } = await serverWithBot({ everyone: READ | Permission.SEND_MESSAGES });
    for (let i = 0; i < 5; i += 1) expect((await botPost(t, bot, channelId, { content: `n${i}` })).statusCode).toBe(200);
    const refused = await botPost(t, bot, channelId, { content: 'too many' });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ message: 'You are being rate limited.', retry_after: 5, global: false, code: 0 });
    expect(refused.headers).toMatchObject({ 'retry-after': '5', 'x-ratelimit-scope': 'user', 'x-ratelimit-remaining': '0', 'x-ratelimit-limit': '5' });
    expect(refused.headers['x-ratelimit-global']).toBeUndefined();
    expect(contents(await get(bot, `/api/v1/channels/${channelId}/messages`))).toHaveLength(5);

    const second = await createChannel(t.services, operatorActing(), serverId, { name: 'second' });
    expect((await botPost(t, bot, second.id, { content: 'elsewhere' })).statusCode).toBe(200);
    t.clock.advance(5000);
    expect((await botPost(t, bot, channelId, { content: 'later' })).statusCode).toBe(200);
  });

  it('the 51st request in a second, on any routes, is a global 429 (global: true, X-RateLimit-Global)', async () => {
    const { bot, serverId, channelId } = await serverWithBot({ everyone: READ });
    const urls = [`/api/v1/channels/${channelId}`, `/api/v1/guilds/${serverId}`, `/api/v1/guilds/${serverId}/roles`];
    for (let i = 0; i < 50; i += 1) expect((await get(bot, urls[i % 3] as string)).statusCode).toBe(200);
    const refused = await get(bot, `/api/v1/users/${bot.botUserId}`);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ message: 'You are being rate limited.', retry_after: 1, global: true, code: 0 });
    expect(refused.headers).toMatchObject({ 'x-ratelimit-global': 'true', 'x-ratelimit-scope': 'global', 'retry-after': '1' });
    // Another bot is not held up by this one's bucket.
    const other = await createBot(t);
    expect((await get(other, `/api/v1/users/${bot.botUserId}`)).statusCode).toBe(200);
    t.clock.advance(1000);
    expect((await get(bot, `/api/v1/users/${bot.botUserId}`)).statusCode).toBe(200);
  });
});
