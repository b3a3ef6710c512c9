import { API, type APIMessage, type APIUser, type APIWebhook } from '@discordjs/core/http-only';
import { DiscordAPIError, REST } from '@discordjs/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createBot, type TestBot } from '../http/dms.fixtures.js';
import { serveTestApp, type ServedApp } from '../support/browser.js';
import { createClient, createPerson, issueCode, type TestClient } from '../support/oauth-factory.js';
import { operatorActing, personActingOf } from '../support/acting.js';

/**
 * DESIGN §1 and §6: unmodified @discordjs/core (over @discordjs/rest, the API base set to
 * {base_url}/api and version "1") against a listening server: the OAuth2 token exchange, refresh
 * and revocation for public and confidential apps, users.getCurrent, users.getGuilds,
 * oauth2.getCurrentAuthorizationInformation, and every webhook call. Assertions are on the fields
 * discord-api-types declares for each answer, with their types.
 */

let served: ServedApp;
let person: Person;
let publicApp: TestClient;
let confidentialApp: TestClient;
let bot: TestBot;
let channel: Channel;
let serverId: string;

const rest = (auth?: { prefix: 'Bot' | 'Bearer'; token: string }) => {
  const r = new REST({ api: `${served.baseUrl}/api`, version: '1', timeout: 15_000, ...(auth ? { authPrefix: auth.prefix } : {}) });
  if (auth) r.setToken(auth.token);
  return new API(r);
};

beforeAll(async () => {
  served = await serveTestApp();
  person = await createPerson(served.t, { username: 'corey', name: 'Corey', avatarUrl: 'https://cdn.example.com/corey.png' });
  publicApp = await createClient(served.t, { owner: person, confidential: false, name: 'Core Public' });
  confidentialApp = await createClient(served.t, { owner: person, confidential: true, name: 'Core Server' });
  bot = await createBot(served.t, { name: 'Core Bot', owner: person });
  const server = await createServer(served.t.services, personActingOf(person.id), { name: 'Core Guild', iconUrl: 'https://cdn.example.com/guild.png' });
  serverId = server.id;
  channel = server.channels[0] as Channel;
  const role = await createRole(served.t.services, operatorActing(), server.id, { name: 'Hooks', permissions: Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES });
  await addMember(served.t.services, operatorActing(), server.id, bot.botUserId, [role.id]);
});
afterAll(async () => served.close());

function expectUser(user: APIUser, expected: { id: string; username: string; global_name: string | null; avatar: boolean; bot: boolean }): void {
  expect(user.id).toBe(expected.id);
  expect(user.username).toEqual(expected.username);
  expect(user.global_name).toEqual(expected.global_name);
  expect(user.discriminator).toBe('0');
  if (expected.avatar) expect(user.avatar).toMatch(/^[0-9a-f]{32}$/);
  else expect(user.avatar).toBeNull();
  expect(user.bot ?? false).toBe(expected.bot);
}

describe('@discordjs/core OAuth2 (unmodified)', () => {
  for (const kind of ['public', 'confidential'] as const) {
    it(`${kind} app: tokenExchange, refreshToken, users.getCurrent, users.getGuilds, getCurrentAuthorizationInformation, revokeToken`, async () => {
      const client = kind === 'public' ? publicApp : confidentialApp;
      const issued = await issueCode(served.t, { client, person, scopes: ['identify', 'servers'], pkce: kind === 'public' });
      const api = rest();
      const tokens = await api.oauth2.tokenExchange({
        grant_type: 'authorization_code',
        code: issued.code,
        redirect_uri: client.redirectUri,
        client_id: client.clientId,
        ...(kind === 'confidential' ? { client_secret: client.clientSecret as string } : { code_verifier: issued.verifier as string }),
      } as Parameters<typeof api.oauth2.tokenExchange>[0]);
      expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'identify servers' });
      expect(typeof tokens.access_token).toBe('string');
      expect(typeof tokens.refresh_token).toBe('string');

      const refreshed = await api.oauth2.refreshToken({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: client.clientId,
        ...(kind === 'confidential' ? { client_secret: client.clientSecret as string } : {}),
      } as Parameters<typeof api.oauth2.refreshToken>[0]);
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

      const asUser = rest({ prefix: 'Bearer', token: refreshed.access_token });
      const me = await asUser.users.getCurrent();
      expectUser(me, { id: person.id, username: 'corey', global_name: 'Corey', avatar: true, bot: false });

      const guilds = await asUser.users.getGuilds();
      const guild = guilds.find((g) => g.id === serverId);
      expect(guild).toBeDefined();
      expect(guild).toMatchObject({ name: 'Core Guild', owner: true, features: [] });
      expect(guild?.icon).toMatch(/^[0-9a-f]{32}$/);
      expect(guild?.permissions).toMatch(/^[0-9]+$/);

      const info = await asUser.oauth2.getCurrentAuthorizationInformation();
      expect(info.scopes).toEqual(['identify', 'servers']);
      expect(Number.isNaN(Date.parse(info.expires))).toBe(false);
      expect(info.application).toMatchObject({ id: client.clientId, name: client.app.name, icon: null, bot_public: true, bot_require_code_grant: false, description: 'An app for tests' });
      expect(info.user?.id).toBe(person.id);

      // A public app has no secret: @discordjs/core then sends HTTP Basic `id:` (DESIGN §1).
      await api.oauth2.revokeToken(client.clientId, kind === 'confidential' ? (client.clientSecret as string) : '', { token: refreshed.access_token });
      const after = await asUser.users.getCurrent().catch((error: unknown) => error);
      expect(after).toBeInstanceOf(DiscordAPIError);
      expect(after).toMatchObject({ status: 401 });
    });
  }

  it('with bot credentials, users.getCurrent is the bot and getCurrentBotApplicationInformation the application', async () => {
    const asBot = rest({ prefix: 'Bot', token: bot.token });
    expectUser(await asBot.users.getCurrent(), { id: bot.botUserId, username: expect.any(String) as unknown as string, global_name: expect.any(String) as unknown as string, avatar: false, bot: true });
    const app = await asBot.oauth2.getCurrentBotApplicationInformation();
    expect(app).toMatchObject({ id: bot.client.clientId, name: 'Core Bot', bot_public: true, bot_require_code_grant: false, icon: null, flags: 0 });
    expect(app.owner?.id).toBe(person.id);
  });
});

describe('@discordjs/core webhooks (unmodified)', () => {
  it('every call: create and list with the bot, get/edit/delete by id and by token, execute (wait and not), getMessage, editMessage, deleteMessage', async () => {
    const asBot = rest({ prefix: 'Bot', token: bot.token });
    const created = await asBot.channels.createWebhook(channel.id, { name: 'Core Hook', avatar: null });
    expect(created).toMatchObject({ type: 1, name: 'Core Hook', channel_id: channel.id, guild_id: serverId, avatar: null, application_id: bot.client.clientId });
    const token = created.token as string;
    expect(typeof token).toBe('string');
    expect((await asBot.channels.getWebhooks(channel.id)).map((w: APIWebhook) => w.id)).toContain(created.id);
    expect(await asBot.webhooks.get(created.id)).toMatchObject({ id: created.id, channel_id: channel.id });

    const api = rest();
    const fetched = await api.webhooks.get(created.id, { token });
    expect(fetched).toMatchObject({ id: created.id, type: 1, name: 'Core Hook', channel_id: channel.id, guild_id: serverId });

    // 204 without a body: @discordjs/rest hands back the empty payload as it is.
    const noWait = (await api.webhooks.execute(created.id, token, { content: 'no wait' })) as unknown;
    expect(noWait).toBeInstanceOf(ArrayBuffer);
    expect((noWait as ArrayBuffer).byteLength).toBe(0);
    const message = (await api.webhooks.execute(created.id, token, { content: 'Hello', embeds: [{ title: 'Build', color: 0x5865f2 }], wait: true })) as APIMessage;
    expect(message).toMatchObject({
      type: 0,
      content: 'Hello',
      channel_id: channel.id,
      webhook_id: created.id,
      application_id: bot.client.clientId,
      attachments: [],
      mentions: [],
      mention_roles: [],
      mention_everyone: false,
      pinned: false,
      tts: false,
      edited_timestamp: null,
      embeds: [{ type: 'rich', title: 'Build', color: 0x5865f2 }],
    });
    expect(Number.isNaN(Date.parse(message.timestamp))).toBe(false);
    expectUser(message.author, { id: created.id, username: 'Core Hook', global_name: null, avatar: false, bot: true });

    const edited = await api.webhooks.editMessage(created.id, token, message.id, { content: 'Edited' });
    expect(edited.content).toBe('Edited');
    expect(typeof edited.edited_timestamp).toBe('string');
    expect((await api.webhooks.getMessage(created.id, token, message.id)).content).toBe('Edited');
    await api.webhooks.deleteMessage(created.id, token, message.id);
    await expect(api.webhooks.getMessage(created.id, token, message.id)).rejects.toMatchObject({ status: 404, code: 10008 });

    expect(await api.webhooks.edit(created.id, { name: 'Renamed' }, { token })).toMatchObject({ id: created.id, name: 'Renamed' });
    expect(await asBot.webhooks.edit(created.id, { name: 'By bot' })).toMatchObject({ name: 'By bot' });
    await api.webhooks.delete(created.id, { token });
    await expect(api.webhooks.get(created.id, { token })).rejects.toMatchObject({ status: 404, code: 10015 });

    const second = await asBot.channels.createWebhook(channel.id, { name: 'Second' });
    await asBot.webhooks.delete(second.id);
    await expect(asBot.webhooks.get(second.id)).rejects.toMatchObject({ status: 404, code: 10015 });
  });
});
