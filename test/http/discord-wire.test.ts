import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import {
  ApplicationResourceBody,
  AuthorizationResourceBody,
  CommandResourceListBody,
  DmChannelResourceBody,
  GuildBody,
  MessageResourceBody,
  PartialGuildListBody,
  UserResourceBody,
  WebhookResourceBody,
  WebhookResourceListBody,
} from '../../src/modules/resources/resources.schemas.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { hashOf, userJson } from '../support/discord-resources.js';
import { basicAuth, createClient, createPerson, getWithBearer, obtainTokens, postForm, type TestClient } from '../support/oauth-factory.js';
import { createBot, openDm, userInstall, type TestBot } from './dms.fixtures.js';
import { operatorActing, personActingOf } from '../support/acting.js';

/** DESIGN §1: the details of Discord's wire that client libraries depend on. */

// The formats the resource schemas name, as AJV checks them for the routes.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)));
if (!FormatRegistry.Has('uri')) FormatRegistry.Set('uri', (v) => URL.canParse(v));

let t: TestApp;
let person: Person;
let client: TestClient;
let bot: TestBot;
let channelId: string;
let serverId: string;

beforeAll(async () => {
  t = await createTestApp();
  person = await createPerson(t, { username: 'wire', name: 'Wire Person', avatarUrl: 'https://cdn.example.com/w.png' });
  client = await createClient(t, { owner: person, confidential: false, name: 'Wire App' });
  bot = await createBot(t, { name: 'Wire Bot', owner: person });
  const server = await createServer(t.services, personActingOf(person.id), { name: 'Wire Server', iconUrl: 'https://cdn.example.com/s.png' });
  serverId = server.id;
  channelId = server.channels[0]?.id as string;
  const role = await createRole(t.services, operatorActing(), server.id, { name: 'Bots', permissions: Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.EMBED_LINKS });
  await addMember(t.services, operatorActing(), server.id, bot.botUserId, [role.id]);
  await userInstall(t, bot, person);
});
afterAll(async () => t.close());

const json = (headers: Record<string, string>, method: 'POST' | 'PATCH' | 'PUT', url: string, body: unknown) =>
  t.app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

describe('Content-Type of JSON answers (DESIGN §1)', () => {
  it('is exactly application/json, without a charset, on resources, errors, 429s and OAuth answers; bodies stay UTF-8', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify']);
    const answers = [
      await getWithBearer(t, '/api/v1/users/@me', tokens.access_token),
      await t.app.inject({ method: 'GET', url: '/api/v1/users/@me' }),
      await t.app.inject({ method: 'GET', url: '/api/v1/no-such-route' }),
      await postForm(t, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: 'nope', client_id: client.clientId }),
      await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' }),
      await json(bot.headers, 'POST', `/api/v1/channels/${channelId}/webhooks`, { name: 'Zürich ✓' }),
    ];
    const { id, token } = answers[5]?.json() as { id: string; token: string };
    let limited;
    for (let i = 0; i < 11 && limited?.statusCode !== 429; i += 1) limited = await json({}, 'POST', `/api/v1/webhooks/${id}/${token}`, { content: `${i}` });
    expect(limited?.statusCode).toBe(429);
    answers.push(limited as (typeof answers)[number]);
    for (const res of answers) expect(res.headers['content-type'], res.body).toBe('application/json');
    expect(answers[5]?.json()).toMatchObject({ name: 'Zürich ✓' });
    expect(answers[5]?.rawPayload.includes(Buffer.from('Zürich ✓', 'utf8'))).toBe(true);
  });

  it('pages keep their HTML type with its charset', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/login' });
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  });
});

describe('percent-encoded @me (DESIGN §1: /users/%40me, as discord-api-types sends it)', () => {
  it('every @me route answers %40me (either hex case) like @me', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify', 'servers']);
    for (const path of ['/api/v1/users/@me', '/api/v1/users/@me/servers', '/api/v1/users/@me/guilds', '/api/v1/oauth2/@me']) {
      const plain = await getWithBearer(t, path, tokens.access_token);
      expect(plain.statusCode, path).toBe(200);
      for (const encoded of [path.replace('@me', '%40me'), path.replace('@me', '%40Me'.replace('M', 'm'))]) {
        const res = await getWithBearer(t, encoded, tokens.access_token);
        expect(res.statusCode, encoded).toBe(200);
        expect(res.json()).toEqual(plain.json());
      }
    }
    for (const path of ['/api/v1/applications/@me', '/api/v1/oauth2/applications/@me', '/api/v1/users/@me']) {
      const res = await t.app.inject({ method: 'GET', url: path.replace('@me', '%40me'), headers: bot.headers });
      expect(res.statusCode, path).toBe(200);
    }
    const dm = await t.app.inject({ method: 'POST', url: '/api/v1/users/%40me/channels', headers: { ...bot.headers, 'content-type': 'application/json' }, payload: JSON.stringify({ recipient_id: person.id }) });
    expect(dm.statusCode).toBe(200);
  });

  it('an encoded @ elsewhere in the path or the query is left alone', async () => {
    // /users/{id} (issue #40 §4) takes "x@me" as an id: no such user, not the bot itself.
    const reader = await createBot(t);
    const other = await t.app.inject({ method: 'GET', url: '/api/v1/users/x%40me', headers: reader.headers });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toMatchObject({ code: 10013 });
    const tokens = await obtainTokens(t, client, person, ['identify']);
    expect((await getWithBearer(t, '/api/v1/users/@me?q=%40me', tokens.access_token)).statusCode).toBe(200);
  });
});

describe('HTTP Basic with an empty password (DESIGN §1)', () => {
  it("from a public app counts as client_id alone: @discordjs/core's revokeToken works", async () => {
    const tokens = await obtainTokens(t, client, person, ['identify']);
    const res = await postForm(t, '/api/oauth2/token/revoke', { token: tokens.access_token }, { headers: { authorization: basicAuth(client.clientId, '') } });
    expect(res.statusCode).toBe(200);
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(401);
  });

  it('from a confidential app is refused: 401 invalid_client with WWW-Authenticate', async () => {
    const confidential = await createClient(t, { owner: person, confidential: true });
    const tokens = await obtainTokens(t, confidential, person, ['identify']);
    const res = await postForm(t, '/api/oauth2/token/revoke', { token: tokens.access_token }, { headers: { authorization: basicAuth(confidential.clientId, '') } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'invalid_client' });
    expect(res.headers['www-authenticate']).toMatch(/^Basic /);
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);
  });
});

describe("Discord's aliases (DESIGN §1)", () => {
  it('scope guilds is servers: granted and reported as servers, and /users/@me/guilds answers', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify', 'servers']);
    expect(tokens.scope).toBe('identify servers');
    expect((await getWithBearer(t, '/api/v1/users/@me/guilds', tokens.access_token)).statusCode).toBe(200);
  });

  it('Authorization: Bot on GET /users/@me is the bot user', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: bot.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...userJson({ id: bot.botUserId, username: expect.any(String), global_name: expect.any(String), avatar_url: null, bot: true }), mfa_enabled: false });
  });

  it('Authorization: Bot on GET /applications/@me and /oauth2/applications/@me is the application, with owner and bot', async () => {
    for (const url of ['/api/v1/applications/@me', '/api/v1/oauth2/applications/@me']) {
      const res = await t.app.inject({ method: 'GET', url, headers: bot.headers });
      expect(res.statusCode, url).toBe(200);
      expect(res.json()).toMatchObject({
        id: bot.client.clientId,
        name: 'Wire Bot',
        bot_public: true,
        bot_require_code_grant: false,
        owner: { id: person.id, username: 'wire' },
        bot: { id: bot.botUserId, bot: true },
      });
    }
  });

  it('/applications/@me without bot credentials, or with a bearer token, is 401', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify']);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me' })).statusCode).toBe(401);
    expect((await getWithBearer(t, '/api/v1/applications/@me', tokens.access_token)).statusCode).toBe(401);
  });
});

describe('every resource’s JSON matches its schema (DESIGN §1: one presenter, one schema per resource)', () => {
  it('user, application, authorization, partial guilds, guild, webhook(s), message, DM channel, commands', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify', 'email', 'servers']);
    const hook = await json(bot.headers, 'POST', `/api/v1/channels/${channelId}/webhooks`, { name: 'Schema', avatar_url: 'https://cdn.example.com/h.png' });
    const { id, token } = hook.json() as { id: string; token: string };
    const embeds = [{ title: 'T', footer: { text: 'f', icon_url: 'https://cdn.example.com/f.png' }, author: { name: 'a', icon_url: 'https://cdn.example.com/a.png' }, image: { url: 'https://cdn.example.com/i.png' }, fields: [{ name: 'n', value: 'v' }] }];
    const cases: Array<[string, TSchema, { statusCode: number; json: () => unknown }]> = [
      ['user (bearer)', UserResourceBody, await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)],
      ['user (bot)', UserResourceBody, await t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: bot.headers })],
      ['application', ApplicationResourceBody, await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers })],
      ['authorization', AuthorizationResourceBody, await getWithBearer(t, '/api/v1/oauth2/@me', tokens.access_token)],
      ['partial guilds', PartialGuildListBody, await getWithBearer(t, '/api/v1/users/@me/guilds', tokens.access_token)],
      ['webhook (created)', WebhookResourceBody, hook],
      ['webhook (by token)', WebhookResourceBody, await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${id}/${token}` })],
      ['webhooks (list)', WebhookResourceListBody, await t.app.inject({ method: 'GET', url: `/api/v1/channels/${channelId}/webhooks`, headers: bot.headers })],
      ['message (webhook)', MessageResourceBody, await json({}, 'POST', `/api/v1/webhooks/${id}/${token}?wait=true`, { content: 'hi', embeds })],
      ['message (bot)', MessageResourceBody, await json(bot.headers, 'POST', `/api/v1/channels/${channelId}/messages`, { content: 'hi', embeds })],
      ['DM channel', DmChannelResourceBody, await openDm(t, bot, { recipient_id: person.id })],
      ['commands', CommandResourceListBody, await json(bot.headers, 'PUT', `/api/v1/applications/${bot.client.clientId}/commands`, [{ name: 'ping', description: 'Ping' }])],
    ];
    for (const [name, schema, res] of cases) {
      expect(res.statusCode, name).toBeLessThan(300);
      const body = res.json();
      expect([...Value.Errors(schema, body)].map((e) => `${e.path}: ${e.message}`), name).toEqual([]);
    }
    expect(Value.Check(GuildBody, { id: serverId, name: 'Wire Server', icon: hashOf('https://cdn.example.com/s.png'), owner_id: person.id, features: [], icon_url: 'https://cdn.example.com/s.png', mfa_level: 0 })).toBe(true);
  });

  it('the OpenAPI document shows Discord’s names', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: { properties?: Record<string, unknown> } }> }> }>> };
    const props = (path: string, method: string, status: string) => Object.keys(doc.paths[path]?.[method]?.responses[status]?.content?.['application/json']?.schema.properties ?? {});
    expect(props('/api/v1/users/@me', 'get', '200')).toEqual(expect.arrayContaining(['global_name', 'avatar', 'discriminator', 'avatar_url']));
    expect(props('/api/v1/webhooks/{id}/{token}', 'get', '200')).toEqual(expect.arrayContaining(['guild_id', 'channel_id', 'application_id', 'avatar']));
    expect(props('/api/v1/webhooks/{id}/{token}/messages/{messageId}', 'get', '200')).toEqual(
      expect.arrayContaining(['channel_id', 'timestamp', 'edited_timestamp', 'webhook_id', 'mention_everyone', 'attachments']),
    );
    const responses = Object.values(doc.paths).flatMap((methods) => Object.values(methods).map((op) => op.responses));
    expect(responses.length).toBeGreaterThan(20);
    expect(JSON.stringify(responses)).not.toMatch(/"(avatarUrl|iconUrl|channelId|serverId|applicationId|webhookId|createdAt|editedAt|mentionEveryone|botPublic|botRequireCodeGrant)"/);
  });
});
