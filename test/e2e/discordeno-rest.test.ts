import { createRestManager } from '@discordeno/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createBot, type TestBot } from '../http/dms.fixtures.js';
import { serveTestApp, type ServedApp } from '../support/browser.js';
import { createClient, createPerson, obtainTokens, type TestClient } from '../support/oauth-factory.js';
import { operatorActing, personActingOf } from '../support/acting.js';

/**
 * DESIGN §1 and §6: unmodified @discordeno/rest, its base set through `proxy.baseUrl` and API
 * version 1, against a listening server. discordeno camelizes Discord's snake_case answers, so
 * the fields its `Camelize<Discord…>` types promise (timestamp, editedTimestamp, attachments,
 * author.avatar, channelId, webhookId, globalName…) must arrive under Discord's names.
 */

let served: ServedApp;
let person: Person;
let client: TestClient;
let bot: TestBot;
let channel: Channel;
let serverId: string;

function manager(token: string, applicationId: string) {
  // `version` is typed as Discord's versions; Gatehouse's is 1 (SPEC §9). The application id is
  // given because discordeno otherwise reads it out of a Discord-format bot token.
  return createRestManager({ token, applicationId, version: 1 as unknown as 10, proxy: { baseUrl: `${served.baseUrl}/api`, authorization: `Bot ${token}` } });
}

beforeAll(async () => {
  served = await serveTestApp();
  person = await createPerson(served.t, { username: 'dena', name: 'Dena', avatarUrl: 'https://cdn.example.com/dena.png' });
  client = await createClient(served.t, { owner: person, confidential: false, name: 'Deno App' });
  bot = await createBot(served.t, { name: 'Deno Bot', owner: person });
  const server = await createServer(served.t.services, personActingOf(person.id), { name: 'Deno Guild' });
  serverId = server.id;
  channel = server.channels[0] as Channel;
  const role = await createRole(served.t.services, operatorActing(), server.id, { name: 'Hooks', permissions: Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL });
  await addMember(served.t.services, operatorActing(), server.id, bot.botUserId, [role.id]);
});
afterAll(async () => served.close());

describe('@discordeno/rest (unmodified, proxy.baseUrl)', () => {
  it('webhook calls answer the camelized fields its types promise, with their types', async () => {
    const rest = manager(bot.token, bot.client.clientId);
    const created = await rest.createWebhook(channel.id, { name: 'Deno Hook' });
    expect(created).toMatchObject({ type: 1, name: 'Deno Hook', channelId: channel.id, guildId: serverId, avatar: null, applicationId: bot.client.clientId });
    const token = created.token as string;

    const fetched = await rest.getWebhookWithToken(created.id, token);
    expect(fetched).toMatchObject({ id: created.id, type: 1, channelId: channel.id, guildId: serverId });

    const message = await rest.executeWebhook(created.id, token, { content: 'Hello', embeds: [{ title: 'Build', color: 0x5865f2 }], wait: true });
    expect(message).toBeDefined();
    expect(message).toMatchObject({
      type: 0,
      content: 'Hello',
      channelId: channel.id,
      webhookId: created.id,
      attachments: [],
      mentions: [],
      mentionRoles: [],
      mentionEveryone: false,
      pinned: false,
      tts: false,
      editedTimestamp: null,
      flags: 0,
      components: [],
      embeds: [{ type: 'rich', title: 'Build', color: 0x5865f2 }],
    });
    expect(typeof message?.timestamp).toBe('string');
    expect(Number.isNaN(Date.parse(message?.timestamp as string))).toBe(false);
    expect(message?.author).toMatchObject({ id: created.id, username: 'Deno Hook', globalName: null, avatar: null, discriminator: '0', bot: true });

    const edited = await rest.editWebhookMessage(created.id, token, message?.id as string, { content: 'Edited' });
    expect(typeof edited.editedTimestamp).toBe('string');
    expect((await rest.getWebhookMessage(created.id, token, message?.id as string)).content).toBe('Edited');
    await rest.deleteWebhookMessage(created.id, token, message?.id as string);
    expect((await rest.editWebhookWithToken(created.id, token, { name: 'Renamed' })).name).toBe('Renamed');
    await rest.deleteWebhookWithToken(created.id, token);
    await expect(rest.getWebhookWithToken(created.id, token)).rejects.toMatchObject({ cause: { status: 404 } });
  });

  it('identity with a bearer token: getCurrentUser, getGuilds and getCurrentAuthenticationInfo', async () => {
    const tokens = await obtainTokens(served.t, client, person, ['identify', 'servers']);
    const rest = createRestManager({ token: 'unused', applicationId: client.clientId, version: 1 as unknown as 10, proxy: { baseUrl: `${served.baseUrl}/api` } });
    const me = await rest.getCurrentUser(tokens.access_token);
    expect(me).toMatchObject({ id: person.id, username: 'dena', globalName: 'Dena', discriminator: '0', avatarUrl: 'https://cdn.example.com/dena.png' });
    expect(me.avatar).toMatch(/^[0-9a-f]{32}$/);
    const guilds = await rest.getGuilds(tokens.access_token);
    expect(guilds.find((g) => g.id === serverId)).toMatchObject({ name: 'Deno Guild', owner: true, features: [] });
    const info = await rest.getCurrentAuthenticationInfo(tokens.access_token);
    expect(info).toMatchObject({ scopes: ['identify', 'servers'], application: { id: client.clientId, botPublic: true, botRequireCodeGrant: false }, user: { id: person.id } });
  });
});
