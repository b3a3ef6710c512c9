import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { regenerateWebhookToken } from '../../src/modules/webhooks/webhooks.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { call, createTestWebhook } from './webhook-url.fixtures.js';
import { hashOf } from '../support/discord-resources.js';
import { actingOf } from '../support/acting.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function webhookCount(channelId: string): Promise<number> {
  const row = await t.services.db.selectFrom('channels').select('webhook_count').where('id', '=', channelId).executeTakeFirstOrThrow();
  return Number(row.webhook_count);
}

describe('GET /api/v1/webhooks/{id}/{token}', () => {
  it('returns the webhook record without its token or creator', async () => {
    const w = await createTestWebhook(t, { name: 'CI', avatarUrl: 'https://img.example/ci.png' });
    const res = await call(t, 'GET', w.path);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: w.webhook.id,
      type: 1,
      guild_id: w.webhook.serverId,
      channel_id: w.channel.id,
      name: 'CI',
      avatar: hashOf('https://img.example/ci.png'),
      avatar_url: 'https://img.example/ci.png',
      application_id: null,
      created_at: new Date(w.webhook.createdAt).toISOString(),
    });
    expect(res.body).not.toContain(w.token);
    expect(res.body).not.toContain(w.webhook.creatorId);
  });
});

describe('the token in the path (SPEC §5.7)', () => {
  it('an unknown or malformed id is 404 10015; a wrong token for a real id is 401 50027', async () => {
    const w = await createTestWebhook(t);
    for (const url of ['/api/v1/webhooks/123/whatever', '/api/v1/webhooks/abc/whatever', '/api/v1/webhooks/99999999999999999999/x']) {
      const res = await call(t, 'GET', url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ code: 10015, message: 'Unknown Webhook' });
    }
    for (const token of ['wrong', `${w.token}x`, w.token.slice(0, -1), w.token.toUpperCase()]) {
      const res = await call(t, 'POST', `/api/v1/webhooks/${w.webhook.id}/${token}`, { content: 'x' });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ code: 50027, message: 'Invalid Webhook Token' });
    }
  });

  it('SPEC §3: once a new URL is generated, the old URL is invalid (401 50027) and the new one works', async () => {
    const w = await createTestWebhook(t);
    expect((await call(t, 'POST', w.path, { content: 'before' })).statusCode).toBe(204);
    const { token } = await regenerateWebhookToken(t.services, actingOf({ kind: 'operator' }), w.webhook);
    for (const [method, url] of [
      ['POST', w.path],
      ['GET', w.path],
      ['PATCH', w.path],
      ['DELETE', w.path],
      ['GET', `${w.path}/messages/1`],
    ] as const) {
      const res = await call(t, method, url, method === 'POST' || method === 'PATCH' ? { content: 'after', name: 'x' } : undefined);
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      expect(res.json()).toEqual({ code: 50027, message: 'Invalid Webhook Token' });
    }
    expect((await call(t, 'POST', `/api/v1/webhooks/${w.webhook.id}/${token}`, { content: 'after' })).statusCode).toBe(204);
  });
});

describe('PATCH /api/v1/webhooks/{id}/{token}', () => {
  it('renames the webhook and changes its avatar; later messages use them', async () => {
    const w = await createTestWebhook(t, { name: 'Old name' });
    const res = await call(t, 'PATCH', w.path, { name: '  New name ', avatarUrl: 'https://img.example/new.png' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: w.webhook.id, name: 'New name', avatar_url: 'https://img.example/new.png' });
    expect(res.json()).not.toHaveProperty('token');
    expect((await call(t, 'GET', w.path)).json()).toMatchObject({ name: 'New name', avatar_url: 'https://img.example/new.png' });
    const posted = await call(t, 'POST', `${w.path}?wait=true`, { content: 'x' });
    expect(posted.json().author).toMatchObject({ username: 'New name', avatar_url: 'https://img.example/new.png', avatar: hashOf('https://img.example/new.png') });
  });

  it('takes avatar_url as an alias, and null (or Discord\'s avatar: null) removes the avatar', async () => {
    const w = await createTestWebhook(t, { avatarUrl: 'https://img.example/a.png' });
    expect((await call(t, 'PATCH', w.path, { avatar_url: 'https://img.example/b.png' })).json().avatar_url).toBe('https://img.example/b.png');
    expect((await call(t, 'PATCH', w.path, { avatarUrl: null })).json().avatar_url).toBeNull();
    await call(t, 'PATCH', w.path, { avatarUrl: 'https://img.example/c.png' });
    expect((await call(t, 'PATCH', w.path, { avatar: null })).json().avatar_url).toBeNull();
    // Issue #42 §3: `avatar` is image data now; a PNG signature alone is no image (test/http/avatar-uploads.test.ts has the uploads).
    const upload = await call(t, 'PATCH', w.path, { avatar: 'data:image/png;base64,iVBORw0KGgo=' });
    expect(upload.statusCode).toBe(400);
    expect(upload.json().errors.avatar._errors[0].message).toContain('PNG, JPEG, GIF or WebP');
  });

  it('refuses a name that passes for the service (SPEC §7) at name, and bad values, changing nothing', async () => {
    const w = await createTestWebhook(t, { name: 'Kept' });
    for (const name of ['Gatehouse', 'Gate\u200bhouse', 'GΑΤΕΗΟUSΕ', 'here']) {
      const res = await call(t, 'PATCH', w.path, { name });
      expect(res.statusCode, name).toBe(400);
      expect(res.json()).toMatchObject({ code: 50035, errors: { name: { _errors: [{ code: expect.any(String), message: expect.any(String) }] } } });
    }
    t.clock.advance(2000);
    for (const body of [{ name: '' }, { name: 'x'.repeat(81) }, { name: 5 }, { avatarUrl: 'http://img.example/a.png' }, { avatarUrl: 7 }]) {
      const res = await call(t, 'PATCH', w.path, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe(50035);
    }
    t.clock.advance(2000);
    expect((await call(t, 'GET', w.path)).json().name).toBe('Kept');
  });
});

describe('DELETE /api/v1/webhooks/{id}/{token}', () => {
  it('SPEC §3/§7: deletes it (204); every later call on it is 404 10015, its messages stay, the channel slot is freed', async () => {
    const w = await createTestWebhook(t);
    const posted = (await call(t, 'POST', `${w.path}?wait=true`, { content: 'I stay' })).json();
    expect(await webhookCount(w.channel.id)).toBe(1);
    const res = await call(t, 'DELETE', w.path);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    for (const [method, url] of [
      ['POST', w.path],
      ['GET', w.path],
      ['PATCH', w.path],
      ['DELETE', w.path],
      ['GET', `${w.path}/messages/${posted.id}`],
      ['PATCH', `${w.path}/messages/${posted.id}`],
      ['DELETE', `${w.path}/messages/${posted.id}`],
    ] as const) {
      const after = await call(t, method, url, method === 'POST' || method === 'PATCH' ? { content: 'x' } : undefined);
      expect(after.statusCode, `${method} ${url}`).toBe(404);
      expect(after.json()).toEqual({ code: 10015, message: 'Unknown Webhook' });
    }
    const stored = await t.services.db.selectFrom('messages').select('content').where('channel_id', '=', w.channel.id).execute();
    expect(stored.map((m) => m.content)).toEqual(['I stay']);
    expect(await webhookCount(w.channel.id)).toBe(0);
  });
});
