import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { hashSecret } from '../../src/core/secrets.js';
import { createChannel } from '../../src/modules/directory/channels.service.js';
import { addMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole, updateRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createPerson } from '../support/oauth-factory.js';
import { createBot, openDm, userInstall, type TestBot } from './dms.fixtures.js';
import { hashOf } from '../support/discord-resources.js';
import { stored } from '../support/stored.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const MANAGE = Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL;

/** A server whose @everyone can only view, with the bot holding a role with `role` (none when undefined). */
async function serverWithBot(role?: bigint): Promise<{ bot: TestBot; serverId: string; channelId: string }> {
  const owner = await createPerson(t);
  const server = await createServer(t.services, personActingOf(owner.id), { name: 'Workshop' });
  await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: Permission.VIEW_CHANNEL });
  const bot = await createBot(t, { name: 'Deployer' });
  await addMember(t.services, operatorActing(), server.id, bot.botUserId);
  if (role !== undefined) {
    const r = await createRole(t.services, operatorActing(), server.id, { name: 'Hooks', permissions: role });
    await setMemberRoles(t.services, operatorActing(), server.id, bot.botUserId, [r.id]);
  }
  return { bot, serverId: server.id, channelId: server.channels[0]?.id as string };
}

function call(bot: TestBot | undefined, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method,
    url,
    headers: { ...(bot ? bot.headers : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}

const create = (bot: TestBot, channelId: string, body: unknown = { name: 'CI' }) => call(bot, 'POST', `/api/v1/channels/${channelId}/webhooks`, body);

async function webhookCount(channelId: string): Promise<{ rows: number; counter: number }> {
  const rows = await t.services.db.selectFrom('webhooks').select('id').where('channel_id', '=', channelId).execute();
  const channel = await t.services.db.selectFrom('channels').select('webhook_count').where('id', '=', channelId).executeTakeFirstOrThrow();
  return { rows: rows.length, counter: Number(channel.webhook_count) };
}

describe('creating a webhook with bot credentials (POST /api/v1/channels/{channelId}/webhooks)', () => {
  it('a bot with Manage webhooks through a role gets 201 with the record, the token and its URL', async () => {
    const { bot, serverId, channelId } = await serverWithBot(MANAGE);
    const res = await create(bot, channelId, { name: '  Release notes  ', avatarUrl: 'https://cdn.example.com/r.png', tts: false });
    expect(res.statusCode).toBe(201);
    const body = res.json() as Record<string, string>;
    expect(body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      type: 1,
      guild_id: serverId,
      channel_id: channelId,
      name: 'Release notes',
      avatar: hashOf('https://cdn.example.com/r.png'),
      avatar_url: 'https://cdn.example.com/r.png',
      application_id: bot.client.app.id,
      created_at: new Date(t.clock.now()).toISOString(),
      token: expect.stringMatching(/^ghwt_[A-Za-z0-9_-]{40,}$/),
      url: `http://localhost:8080/api/v1/webhooks/${body['id']}/${body['token']}`,
    });
    const row = await stored.webhook(t, body['id'] as string);
    expect(row?.creatorId).toBe(bot.botUserId);
  });

  it('keeps only the SHA-256 of the token: the plain token is nowhere in the row', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    const body = (await create(bot, channelId)).json() as { id: string; token: string };
    const row = await t.services.db.selectFrom('webhooks').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(body.token);
    expect(row.token_hash).toBe(hashSecret(body.token));
  });

  it('accepts avatar_url as an alias of avatarUrl', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    const res = await create(bot, channelId, { name: 'Alias', avatar_url: 'https://cdn.example.com/a.png' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ avatar_url: 'https://cdn.example.com/a.png' });
  });

  it('a bot without Manage webhooks gets 403 (50013) and nothing is created', async () => {
    const { bot, channelId } = await serverWithBot(Permission.SEND_MESSAGES);
    const res = await create(bot, channelId);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 50013 });
    expect(await webhookCount(channelId)).toEqual({ rows: 0, counter: 0 });
  });

  it('Manage webhooks without View channel is not enough to create: 403 (50013)', async () => {
    const owner = await createPerson(t);
    const server = await createServer(t.services, personActingOf(owner.id), { name: 'Blind' });
    await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: 0n });
    const bot = await createBot(t);
    const role = await createRole(t.services, operatorActing(), server.id, { name: 'Hooks only', permissions: Permission.MANAGE_WEBHOOKS });
    await addMember(t.services, operatorActing(), server.id, bot.botUserId, [role.id]);
    const res = await create(bot, server.channels[0]?.id as string);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 50013 });
  });

  it('a bot that is not in the server gets 404 (10003), like for a channel that does not exist', async () => {
    const { channelId } = await serverWithBot(MANAGE);
    const outsider = await createBot(t, { name: 'Outsider' });
    const res = await create(outsider, channelId);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 10003 });
    expect((await create(outsider, '123456789012345678')).json()).toMatchObject({ code: 10003 });
    expect((await create(outsider, 'not-a-snowflake')).statusCode).toBe(404);
  });

  it('without bot credentials: 401 (code 0)', async () => {
    const { channelId } = await serverWithBot(MANAGE);
    const res = await call(undefined, 'POST', `/api/v1/channels/${channelId}/webhooks`, { name: 'CI' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 0 });
  });

  it('refuses bad names and avatars with 50035 at the field, creating nothing', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    const cases: Array<[unknown, string]> = [
      [{}, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(81) }, 'name'],
      [{ name: 'line\nbreak' }, 'name'],
      [{ name: 'CI', avatarUrl: 'http://cdn.example.com/a.png' }, 'avatarUrl'],
      [{ name: 'CI', avatarUrl: 'javascript:alert(1)' }, 'avatarUrl'],
    ];
    for (const [body, field] of cases) {
      const res = await create(bot, channelId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      const json = res.json() as { code: number; errors: Record<string, { _errors: unknown[] }> };
      expect(json.code).toBe(50035);
      expect(json.errors[field]?._errors.length).toBeGreaterThan(0);
    }
    expect(await webhookCount(channelId)).toEqual({ rows: 0, counter: 0 });
  });

  it('80 characters (emoji count as one) are allowed, 81 are not', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    expect((await create(bot, channelId, { name: '🚀'.repeat(80) })).statusCode).toBe(201);
    expect((await create(bot, channelId, { name: '🚀'.repeat(81) })).statusCode).toBe(400);
  });

  it('refuses names that pass for the service or are reserved words, in their variants', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    for (const name of ['Gatehouse', 'gatehouse bot', 'GΑΤΕΗΟUSΕ', 'Gate\u200bhouse', 'G4tehouse alerts', 'System', 'everyone', ' HERE ']) {
      const res = await create(bot, channelId, { name });
      expect(res.statusCode, name).toBe(400);
      expect(res.json(), name).toMatchObject({ code: 50035, errors: { name: { _errors: [expect.objectContaining({ code: 'USERNAME_INVALID' })] } } });
    }
    for (const name of ['Where bot', 'Ecosystem feed']) expect((await create(bot, channelId, { name })).statusCode, name).toBe(201);
  });

  it('a DM channel has no Manage webhooks: 403 (50013)', async () => {
    const bot = await createBot(t);
    const person = await createPerson(t);
    await userInstall(t, bot, person);
    const opened = await openDm(t, bot, { recipientId: person.id });
    expect(opened.statusCode).toBe(200);
    const channelId = (opened.json() as { id: string }).id;
    const res = await create(bot, channelId);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 50013 });
    expect(await webhookCount(channelId)).toEqual({ rows: 0, counter: 0 });
  });
});

describe('the limit of 10 webhooks per channel (SPEC §8)', () => {
  it('the 11th answers 400 (30007); deleting one frees a slot', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    const ids: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      // A bot may make 10 such writes per 10 s (docs/bots.md "Rate limits"): one a second.
      t.clock.advance(1000);
      const res = await create(bot, channelId, { name: `Hook ${i}` });
      expect(res.statusCode).toBe(201);
      ids.push((res.json() as { id: string }).id);
    }
    t.clock.advance(1000);
    const eleventh = await create(bot, channelId, { name: 'One too many' });
    expect(eleventh.statusCode).toBe(400);
    expect(eleventh.json()).toMatchObject({ code: 30007 });
    expect(await webhookCount(channelId)).toEqual({ rows: 10, counter: 10 });

    expect((await call(bot, 'DELETE', `/api/v1/webhooks/${ids[0]}`)).statusCode).toBe(204);
    expect(await webhookCount(channelId)).toEqual({ rows: 9, counter: 9 });
    t.clock.advance(10_000);
    expect((await create(bot, channelId, { name: 'Back in' })).statusCode).toBe(201);
    expect((await create(bot, channelId, { name: 'Full again' })).json()).toMatchObject({ code: 30007 });
  });

  it('the limit is per channel: another channel of the server still takes webhooks', async () => {
    const { bot, serverId, channelId } = await serverWithBot(MANAGE);
    for (let i = 0; i < 10; i += 1) expect((await create(bot, channelId, { name: `Hook ${i}` })).statusCode).toBe(201);
    const other = await createChannel(t.services, operatorActing(), serverId, { name: 'other' });
    expect((await create(bot, other.id)).statusCode).toBe(201);
  });
});

describe('managing webhooks with bot credentials', () => {
  it('lists a channel’s webhooks without tokens, and gets one by id', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    const a = (await create(bot, channelId, { name: 'A' })).json() as { id: string; token: string };
    const b = (await create(bot, channelId, { name: 'B' })).json() as { id: string };
    const list = await call(bot, 'GET', `/api/v1/channels/${channelId}/webhooks`);
    expect(list.statusCode).toBe(200);
    const records = list.json() as Array<Record<string, unknown>>;
    expect(records.map((r) => r['id'])).toEqual([a.id, b.id]);
    for (const r of records) {
      expect(r).not.toHaveProperty('token');
      expect(r).not.toHaveProperty('url');
      expect(r).not.toHaveProperty('creatorId');
    }
    expect(list.body).not.toContain(a.token);
    const one = await call(bot, 'GET', `/api/v1/webhooks/${a.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ id: a.id, name: 'A', type: 1, channel_id: channelId });
    expect(one.json()).not.toHaveProperty('token');
  });

  it('renames and changes the avatar (PATCH), leaving absent fields and the token alone', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    const created = (await create(bot, channelId, { name: 'Old', avatarUrl: 'https://cdn.example.com/1.png' })).json() as { id: string; token: string };
    const renamed = await call(bot, 'PATCH', `/api/v1/webhooks/${created.id}`, { name: 'New' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'New', avatar_url: 'https://cdn.example.com/1.png' });
    expect(renamed.json()).not.toHaveProperty('token');
    const cleared = await call(bot, 'PATCH', `/api/v1/webhooks/${created.id}`, { avatarUrl: null });
    expect(cleared.json()).toMatchObject({ name: 'New', avatar: null, avatar_url: null });
    const row = await stored.webhook(t, created.id);
    expect(row).toMatchObject({ name: 'New', avatarUrl: null, tokenHash: hashSecret(created.token) });
  });

  it('a refused PATCH changes nothing', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    const created = (await create(bot, channelId, { name: 'Keep' })).json() as { id: string };
    const res = await call(bot, 'PATCH', `/api/v1/webhooks/${created.id}`, { name: 'Gatehouse Official', avatarUrl: 'https://cdn.example.com/x.png' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 50035, errors: { name: {} } });
    expect(await stored.webhook(t, created.id)).toMatchObject({ name: 'Keep', avatarUrl: null });
  });

  it('deletes (204); afterwards the id is unknown (10015) and the webhook’s URL answers 404', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    const created = (await create(bot, channelId)).json() as { id: string; token: string };
    expect((await call(bot, 'DELETE', `/api/v1/webhooks/${created.id}`)).statusCode).toBe(204);
    const again = await call(bot, 'GET', `/api/v1/webhooks/${created.id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ code: 10015 });
    expect((await call(bot, 'DELETE', `/api/v1/webhooks/${created.id}`)).json()).toMatchObject({ code: 10015 });
    expect((await call(undefined, 'GET', `/api/v1/webhooks/${created.id}/${created.token}`)).statusCode).toBe(404);
  });

  it('every management route needs Manage webhooks (403 50013) and membership (404)', async () => {
    const { bot, serverId, channelId } = await serverWithBot(MANAGE);
    const created = (await create(bot, channelId)).json() as { id: string };
    const member = await createBot(t, { name: 'Member' });
    await addMember(t.services, operatorActing(), serverId, member.botUserId);
    const outsider = await createBot(t, { name: 'Outsider' });
    const routes: Array<[('GET' | 'POST' | 'PATCH' | 'DELETE'), string, unknown?]> = [
      ['GET', `/api/v1/channels/${channelId}/webhooks`],
      ['GET', `/api/v1/webhooks/${created.id}`],
      ['PATCH', `/api/v1/webhooks/${created.id}`, { name: 'Mine' }],
      ['POST', `/api/v1/webhooks/${created.id}/token`],
      ['DELETE', `/api/v1/webhooks/${created.id}`],
    ];
    for (const [method, url, body] of routes) {
      const forbidden = await call(member, method, url, body);
      expect(forbidden.statusCode, `${method} ${url}`).toBe(403);
      expect(forbidden.json()).toMatchObject({ code: 50013 });
      const hidden = await call(outsider, method, url, body);
      expect(hidden.statusCode, `${method} ${url}`).toBe(404);
      expect(hidden.json()).toMatchObject({ code: url.includes('/channels/') ? 10003 : 10015 });
    }
    expect(await stored.webhook(t, created.id)).toMatchObject({ name: 'CI' });
  });

  it('manages webhooks a person created too (application id null)', async () => {
    const { bot, serverId, channelId } = await serverWithBot(MANAGE);
    const { createWebhook } = await import('../../src/modules/webhooks/webhooks.service.js');
    const owner = await t.services.db.selectFrom('servers').select('owner_id').where('id', '=', serverId).executeTakeFirstOrThrow();
    const channel = { id: channelId, serverId, type: 0, name: 'general', topic: null, position: 0, createdAt: 0 };
    const made = await createWebhook(t.services, actingOf({ kind: 'person', id: String(owner.owner_id) }), channel, { name: 'By hand' });
    const res = await call(bot, 'GET', `/api/v1/webhooks/${made.webhook.id}`);
    expect(res.json()).toMatchObject({ name: 'By hand', application_id: null });
  });
});

describe('regenerating a webhook’s token (POST /api/v1/webhooks/{id}/token)', () => {
  it('answers a new token and URL once; the old URL stops working at once (401 50027)', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    const created = (await create(bot, channelId)).json() as { id: string; token: string };
    expect((await call(undefined, 'GET', `/api/v1/webhooks/${created.id}/${created.token}`)).statusCode).toBe(200);

    const res = await call(bot, 'POST', `/api/v1/webhooks/${created.id}/token`);
    expect(res.statusCode).toBe(200);
    const body = res.json() as { id: string; token: string; url: string };
    expect(body.id).toBe(created.id);
    expect(body.token).toMatch(/^ghwt_/);
    expect(body.token).not.toBe(created.token);
    expect(body.url).toBe(`http://localhost:8080/api/v1/webhooks/${created.id}/${body.token}`);

    const row = await stored.webhook(t, created.id);
    expect(row?.tokenHash).toBe(hashSecret(body.token));
    const old = await call(undefined, 'GET', `/api/v1/webhooks/${created.id}/${created.token}`);
    expect(old.statusCode).toBe(401);
    expect(old.json()).toMatchObject({ code: 50027 });
    expect((await call(undefined, 'GET', `/api/v1/webhooks/${created.id}/${body.token}`)).statusCode).toBe(200);

    // Shown once: reading the webhook afterwards never includes it.
    expect((await call(bot, 'GET', `/api/v1/webhooks/${created.id}`)).body).not.toContain(body.token);
  });
});
