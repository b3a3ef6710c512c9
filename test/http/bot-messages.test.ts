import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { resetBotToken } from '../../src/modules/applications/bots.service.js';
import { createChannel } from '../../src/modules/directory/channels.service.js';
import { addMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole, updateRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import type { ChannelEvent } from '../../src/realtime/channel-events.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { signedIn } from '../support/directory-fixtures.js';
import { createPerson, obtainTokens } from '../support/oauth-factory.js';
import { botPost, createBot, type TestBot } from './dms.fixtures.js';
import { MESSAGE_NEUTRAL, userJson } from '../support/discord-resources.js';
import { OPERATOR } from '../../src/core/actor.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const VIEW_SEND = Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES;

async function messagesIn(channelId: string): Promise<Array<{ author_id: string; application_id: string | null; content: string }>> {
  const rows = await t.services.db.selectFrom('messages').select(['author_id', 'application_id', 'content']).where('channel_id', '=', channelId).orderBy('id').execute();
  return rows.map((r) => ({ author_id: String(r.author_id), application_id: r.application_id === null ? null : String(r.application_id), content: r.content }));
}

/**
 * A server whose @everyone holds only `everyone`, with the bot as a member holding a role with
 * `role` (no role when undefined).
 */
async function serverWithBot(input: { everyone: bigint; role?: bigint }): Promise<{ bot: TestBot; channelId: string; serverId: string; ownerId: string }> {
  const owner = await createPerson(t);
  const server = await createServer(t.services, personActingOf(owner.id), { name: 'Workshop' });
  await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: input.everyone });
  const bot = await createBot(t, { name: 'Builder' });
  await addMember(t.services, operatorActing(), server.id, bot.botUserId);
  if (input.role !== undefined) {
    const role = await createRole(t.services, operatorActing(), server.id, { name: 'Bots', permissions: input.role });
    await setMemberRoles(t.services, operatorActing(), server.id, bot.botUserId, [role.id]);
  }
  return { bot, channelId: server.channels[0]?.id as string, serverId: server.id, ownerId: owner.id };
}

describe('bot messages in a server channel (POST /api/v1/channels/{channelId}/messages)', () => {
  it('a bot whose role holds View channel and Send messages posts: 200 with the message record, stored as the bot', async () => {
    const { bot, channelId } = await serverWithBot({ everyone: 0n, role: VIEW_SEND });
    const events: ChannelEvent[] = [];
    const stop = t.services.events.subscribe(channelId, (e) => events.push(e));
    const res = await botPost(t, bot, channelId, { content: 'Build #42 passed. @everyone @here <@123>', tts: false, nonce: 'x', allowed_mentions: { parse: [] } });
    stop();
    expect(res.statusCode).toBe(200);
    const record = res.json() as Record<string, unknown>;
    expect(record).toEqual({
      ...MESSAGE_NEUTRAL,
      id: expect.stringMatching(/^\d+$/),
      channel_id: channelId,
      content: 'Build #42 passed. @everyone @here <@123>',
      embeds: [],
      author: userJson({ id: bot.botUserId, username: expect.any(String), global_name: expect.any(String), avatar_url: null, bot: true }),
      application_id: bot.client.app.id,
      mentions: [],
      mention_everyone: false,
      timestamp: new Date(t.clock.now()).toISOString(),
      edited_timestamp: null,
    });
    expect(await messagesIn(channelId)).toEqual([{ author_id: bot.botUserId, application_id: bot.client.app.id, content: 'Build #42 passed. @everyone @here <@123>' }]);
    expect(events).toEqual([{ type: 'message_create', channelId, messageId: record['id'] }]);
  });

  it('people see it in the channel with the bot’s name and an APP badge', async () => {
    const { agent, person } = await signedIn(t);
    const server = await createServer(t.services, personActingOf(person.id), { name: 'Readers' });
    const bot = await createBot(t, { name: 'Herald' });
    await addMember(t.services, operatorActing(), server.id, bot.botUserId);
    const channelId = server.channels[0]?.id as string;
    expect((await botPost(t, bot, channelId, { content: 'Hear ye' })).statusCode).toBe(200);
    const page = await agent.get(`/channels/${channelId}`);
    expect(page.body).toMatch(/<span class="author">Herald<\/span><span class="badge"[^>]*>APP<\/span>/);
    expect(page.body).toContain('Hear ye');
  });

  it('without Send messages (neither @everyone nor its roles hold it): 403, code 50013, nothing stored', async () => {
    for (const setup of [{ everyone: Permission.VIEW_CHANNEL }, { everyone: Permission.VIEW_CHANNEL, role: Permission.EMBED_LINKS }]) {
      const { bot, channelId } = await serverWithBot(setup);
      const res = await botPost(t, bot, channelId, { content: 'hello' });
      expect(res.statusCode, JSON.stringify(setup, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).toBe(403);
      expect(res.json()).toEqual({ code: 50013, message: 'Missing Permissions' });
      expect(await messagesIn(channelId)).toEqual([]);
    }
  });

  it('giving the bot a role with Send messages lets it post; Administrator grants everything', async () => {
    const { bot, channelId, serverId } = await serverWithBot({ everyone: Permission.VIEW_CHANNEL });
    expect((await botPost(t, bot, channelId, { content: 'x' })).statusCode).toBe(403);
    const role = await createRole(t.services, operatorActing(), serverId, { name: 'Talkers', permissions: Permission.SEND_MESSAGES });
    await setMemberRoles(t.services, operatorActing(), serverId, bot.botUserId, [role.id]);
    expect((await botPost(t, bot, channelId, { content: 'now I can' })).statusCode).toBe(200);

    const admin = await serverWithBot({ everyone: 0n, role: Permission.ADMINISTRATOR });
    expect((await botPost(t, admin.bot, admin.channelId, { content: 'admin', embeds: [{ title: 'e' }] })).statusCode).toBe(200);
  });

  it('without View channel it cannot post either: 403, code 50013', async () => {
    const { bot, channelId } = await serverWithBot({ everyone: Permission.SEND_MESSAGES });
    const res = await botPost(t, bot, channelId, { content: 'hello' });
    expect(res.statusCode).toBe(403);
    expect((res.json() as { code: number }).code).toBe(50013);
  });

  it('embeds need Embed links: 403, code 50013, without it; content alone still works', async () => {
    const { bot, channelId } = await serverWithBot({ everyone: 0n, role: VIEW_SEND });
    const withEmbed = await botPost(t, bot, channelId, { content: 'see below', embeds: [{ title: 'Report', description: 'All green' }] });
    expect(withEmbed.statusCode).toBe(403);
    expect((withEmbed.json() as { code: number }).code).toBe(50013);
    expect(await messagesIn(channelId)).toEqual([]);
    expect((await botPost(t, bot, channelId, { content: 'text only' })).statusCode).toBe(200);
    // An empty embeds array is no embed.
    expect((await botPost(t, bot, channelId, { content: 'still text', embeds: [] })).statusCode).toBe(200);

    const allowed = await serverWithBot({ everyone: 0n, role: VIEW_SEND | Permission.EMBED_LINKS });
    const res = await botPost(t, allowed.bot, allowed.channelId, { embeds: [{ title: 'Report', color: 0x00ff00, fields: [{ name: 'a', value: 'b', inline: true }] }] });
    expect(res.statusCode).toBe(200);
    expect((res.json() as { embeds: unknown[]; content: string }).embeds).toEqual([{ type: 'rich', title: 'Report', color: 0x00ff00, fields: [{ name: 'a', value: 'b', inline: true }] }]);
  });

  it('a channel of a server the bot is not in, an unknown channel and a malformed id are all 404, code 10003', async () => {
    const bot = await createBot(t);
    const owner = await createPerson(t);
    const server = await createServer(t.services, personActingOf(owner.id), { name: 'Elsewhere' });
    const other = await createChannel(t.services, operatorActing(), server.id, { name: 'private' });
    for (const channelId of [server.channels[0]?.id as string, other.id, '123456789012345678', 'general', '9'.repeat(30)]) {
      const res = await botPost(t, bot, channelId, { content: 'hi' });
      expect(res.statusCode, channelId).toBe(404);
      expect(res.json()).toEqual({ code: 10003, message: 'Unknown Channel' });
    }
    expect(await messagesIn(server.channels[0]?.id as string)).toEqual([]);
  });

  it('payload errors: empty → 400 50006; 2001 code points → 400 50035 at content; 2000 emoji are fine', async () => {
    const { bot, channelId } = await serverWithBot({ everyone: 0n, role: VIEW_SEND | Permission.EMBED_LINKS });
    for (const body of [{}, { content: '' }, { content: '', embeds: [] }, { tts: true }]) {
      // A refused post still spends the channel's bucket (5 per 5 s, docs/bots.md "Rate limits").
      t.clock.advance(5000);
      const res = await botPost(t, bot, channelId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect((res.json() as { code: number }).code).toBe(50006);
    }
    t.clock.advance(5000);
    const tooLong = await botPost(t, bot, channelId, { content: 'a'.repeat(2001) });
    expect(tooLong.statusCode).toBe(400);
    const answer = tooLong.json() as { code: number; errors: { content: { _errors: Array<{ code: string }> } } };
    expect(answer.code).toBe(50035);
    expect(answer.errors.content._errors[0]?.code).toBe('BASE_TYPE_MAX_LENGTH');
    t.clock.advance(5000);
    const badEmbed = await botPost(t, bot, channelId, { embeds: [{ title: 't'.repeat(257) }] });
    expect(badEmbed.statusCode).toBe(400);
    expect((badEmbed.json() as { errors: Record<string, unknown> }).errors).toHaveProperty(['embeds', '0', 'title']);
    expect(await messagesIn(channelId)).toEqual([]);
    t.clock.advance(5000);
    expect((await botPost(t, bot, channelId, { content: '😀'.repeat(2000) })).statusCode).toBe(200);
  });

  it('a bot cannot impersonate: username and avatarUrl are ignored, the message is the bot’s', async () => {
    const { bot, channelId } = await serverWithBot({ everyone: 0n, role: VIEW_SEND });
    const res = await botPost(t, bot, channelId, { content: 'hi', username: 'Someone Else', avatarUrl: 'https://example.com/a.png' });
    expect(res.statusCode).toBe(200);
    const record = res.json() as { author: { id: string; username: string; avatar: string | null; avatar_url: string | null } };
    expect(record.author.id).toBe(bot.botUserId);
    expect(record.author.username).not.toBe('Someone Else');
    expect(record.author.avatar_url).toBeNull();
    expect(record.author.avatar).toBeNull();
  });

  it('bot credentials only: no header, a Bearer token, a wrong or a reset token → 401, code 0', async () => {
    const { bot, channelId } = await serverWithBot({ everyone: 0n, role: VIEW_SEND });
    const oldToken = bot.token;
    for (const authorization of [undefined, `Bearer ${bot.token}`, 'Bot ', `Bot ${bot.token.slice(0, -2)}`]) {
      const res = await botPost(t, bot, channelId, { content: 'hi' }, authorization === undefined ? {} : { authorization });
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.json()).toEqual({ code: 0, message: '401: Unauthorized' });
    }
    // A real OAuth2 access token of the same app is not bot credentials either.
    const tokens = await obtainTokens(t, bot.client, await createPerson(t));
    const bearer = await botPost(t, bot, channelId, { content: 'hi' }, { authorization: `Bearer ${tokens.access_token}` });
    expect(bearer.statusCode).toBe(401);
    expect(await messagesIn(channelId)).toEqual([]);

    const fresh = await resetBotToken(t.services, actingOf(OPERATOR), bot.client.app.id);
    expect((await botPost(t, bot, channelId, { content: 'old' }, { authorization: `Bot ${oldToken}` })).statusCode).toBe(401);
    expect((await botPost(t, bot, channelId, { content: 'new' }, { authorization: `Bot ${fresh}` })).statusCode).toBe(200);
    expect((await messagesIn(channelId)).map((m) => m.content)).toEqual(['new']);
  });
});

describe('bot credentials are checked before the body (DESIGN §1)', () => {
  it('a request without valid bot credentials is 401 whatever its body, never a validation error', async () => {
    for (const payload of ['not json at all', '[1,2,3]', '{"content": 5}']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/channels/123/messages',
        headers: { authorization: 'Bot ghbt_wrong', 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ code: 0, message: '401: Unauthorized' });
    }
  });
});
