import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketHash } from '../../src/modules/webhooks/webhook-rate-limit.js';
import { regenerateWebhookToken } from '../../src/modules/webhooks/webhooks.service.js';
import { WEBHOOK_URL } from '../../src/modules/webhooks/execute.routes.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { sample } from '../support/metrics.js';
import { nextAddress } from '../support/oauth-factory.js';
import { call, createTestWebhook } from './webhook-url.fixtures.js';
import { actingOf } from '../support/acting.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const seconds = (ms: number) => (ms / 1000).toFixed(3);

describe('SPEC §8: a bucket of 10 requests every 2 seconds, per webhook', () => {
  it('the 11th request within 2 s answers 429 with Retry-After, the rate-limit headers and Discord\'s body; nothing is posted', async () => {
    const w = await createTestWebhook(t);
    const start = t.clock.now();
    for (let i = 0; i < 10; i += 1) expect((await call(t, 'POST', w.path, { content: `#${i}` })).statusCode).toBe(204);
    t.clock.advance(750);
    const res = await call(t, 'POST', w.path, { content: 'one too many' });
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({ message: 'You are being rate limited.', retry_after: 1.25, global: false, code: 0 });
    expect(res.headers['retry-after']).toBe('2');
    expect(res.headers['x-ratelimit-limit']).toBe('10');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expect(res.headers['x-ratelimit-reset']).toBe(seconds(start + 2000));
    expect(res.headers['x-ratelimit-reset-after']).toBe('1.250');
    expect(res.headers['x-ratelimit-bucket']).toBe(bucketHash('webhook', w.webhook.id));
    expect(res.headers['x-ratelimit-scope']).toBe('shared');
    const count = await t.services.db.selectFrom('messages').select('id').where('channel_id', '=', w.channel.id).execute();
    expect(count).toHaveLength(10);
  });

  it('every answer carries the headers, counting down over a window, and the window resets on the clock', async () => {
    const w = await createTestWebhook(t);
    const start = t.clock.now();
    for (let i = 0; i < 10; i += 1) {
      const res = await call(t, 'POST', w.path, { content: 'tick' });
      expect(res.headers['x-ratelimit-limit']).toBe('10');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(9 - i));
      expect(res.headers['x-ratelimit-reset']).toBe(seconds(start + 2000));
      expect(res.headers['x-ratelimit-reset-after']).toBe(seconds(2000 - i * 100));
      expect(res.headers['x-ratelimit-scope']).toBeUndefined();
      t.clock.advance(100);
    }
    t.clock.set(start + 1999);
    expect((await call(t, 'POST', w.path, { content: 'late' })).statusCode).toBe(429);
    t.clock.set(start + 2000);
    const fresh = await call(t, 'POST', w.path, { content: 'new window' });
    expect(fresh.statusCode).toBe(204);
    expect(fresh.headers['x-ratelimit-remaining']).toBe('9');
    expect(fresh.headers['x-ratelimit-reset']).toBe(seconds(start + 4000));
    expect(fresh.headers['x-ratelimit-reset-after']).toBe('2.000');
  });

  it('rounds Retry-After up to whole seconds', async () => {
    const w = await createTestWebhook(t);
    for (let i = 0; i < 10; i += 1) await call(t, 'POST', w.path, { content: 'x' });
    t.clock.advance(1999);
    const res = await call(t, 'POST', w.path, { content: 'x' });
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json().retry_after).toBe(0.001);
  });

  it('the 429, answered by the gate before the body is read, still carries the request id and the API security headers and is counted in the metrics', async () => {
    const w = await createTestWebhook(t);
    for (let i = 0; i < 10; i += 1) await call(t, 'POST', w.path, { content: 'x' });
    const counted = async () =>
      sample((await t.app.inject({ method: 'GET', url: '/metrics' })).body, 'http_requests_total', { method: 'POST', route: WEBHOOK_URL, status_code: '429' }) ?? 0;
    const before = await counted();
    const res = await t.app.inject({ method: 'POST', url: w.path, headers: { 'content-type': 'application/json', 'x-request-id': 'limited-1' }, payload: { content: 'x' } });
    expect(res.statusCode).toBe(429);
    expect(res.headers['x-request-id']).toBe('limited-1');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(await counted()).toBe(before + 1);
  });

  it('one bucket covers every route of the webhook URL (execute, read, edit, delete)', async () => {
    const w = await createTestWebhook(t);
    const posted = await call(t, 'POST', `${w.path}?wait=true`, { content: 'a' });
    const messageId = posted.json().id as string;
    await call(t, 'GET', w.path);
    await call(t, 'PATCH', w.path, { name: 'Renamed' });
    await call(t, 'GET', `${w.path}/messages/${messageId}`);
    await call(t, 'PATCH', `${w.path}/messages/${messageId}`, { content: 'b' });
    for (let i = 0; i < 4; i += 1) await call(t, 'POST', w.path, { content: 'c' });
    const tenth = await call(t, 'GET', `${w.path}/messages/${messageId}`);
    expect(tenth.statusCode).toBe(200);
    expect(tenth.headers['x-ratelimit-remaining']).toBe('0');
    for (const [method, url] of [
      ['GET', w.path],
      ['DELETE', `${w.path}/messages/${messageId}`],
      ['DELETE', w.path],
    ] as const) {
      const res = await call(t, method, url);
      expect(res.statusCode, `${method} ${url}`).toBe(429);
      expect(res.headers['x-ratelimit-bucket']).toBe(bucketHash('webhook', w.webhook.id));
    }
  });

  it('errors of a valid URL count too and carry the headers (400, 404 10008)', async () => {
    const w = await createTestWebhook(t);
    const bad = await call(t, 'POST', w.path, { content: '' });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['x-ratelimit-remaining']).toBe('9');
    const missing = await call(t, 'GET', `${w.path}/messages/1`);
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['x-ratelimit-remaining']).toBe('8');
  });

  it('webhooks have buckets of their own, with distinct opaque bucket names', async () => {
    const a = await createTestWebhook(t);
    const b = await createTestWebhook(t);
    for (let i = 0; i < 10; i += 1) await call(t, 'POST', a.path, { content: 'a' });
    expect((await call(t, 'POST', a.path, { content: 'a' })).statusCode).toBe(429);
    const other = await call(t, 'POST', b.path, { content: 'b' });
    expect(other.statusCode).toBe(204);
    expect(other.headers['x-ratelimit-bucket']).not.toBe(bucketHash('webhook', a.webhook.id));
    expect(other.headers['x-ratelimit-bucket']).not.toContain(b.webhook.id);
    expect(other.headers['x-ratelimit-bucket']).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('requests that prove no webhook are limited per client address, not on the webhook', () => {
  it('a wrong token does not consume the webhook\'s bucket', async () => {
    const w = await createTestWebhook(t);
    const wrong = `/api/v1/webhooks/${w.webhook.id}/ghwt_not-the-token`;
    for (let i = 0; i < 25; i += 1) expect((await call(t, 'POST', wrong, { content: 'spam' })).statusCode).toBe(401);
    const res = await call(t, 'POST', w.path, { content: 'still here' });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-ratelimit-remaining']).toBe('9');
  });

  it('an old token after regeneration does not consume the new URL\'s bucket either', async () => {
    const w = await createTestWebhook(t);
    const { token } = await regenerateWebhookToken(t.services, actingOf({ kind: 'operator' }), w.webhook);
    for (let i = 0; i < 12; i += 1) expect((await call(t, 'POST', w.path, { content: 'old' })).statusCode).toBe(401);
    const fresh = await call(t, 'POST', `/api/v1/webhooks/${w.webhook.id}/${token}`, { content: 'new' });
    expect(fresh.statusCode).toBe(204);
    expect(fresh.headers['x-ratelimit-remaining']).toBe('9');
  });

  it('30 wrong tokens or unknown ids per 10 s per address, then 429 with scope "user"', async () => {
    const w = await createTestWebhook(t);
    const address = nextAddress();
    const start = t.clock.now();
    for (let i = 0; i < 30; i += 1) {
      const url = i % 2 === 0 ? `/api/v1/webhooks/${w.webhook.id}/wrong${i}` : `/api/v1/webhooks/${i + 1}/whatever`;
      const res = await call(t, 'GET', url, undefined, address);
      expect(res.statusCode).toBe(i % 2 === 0 ? 401 : 404);
      expect(res.headers['x-ratelimit-limit']).toBe('30');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(29 - i));
      expect(res.headers['x-ratelimit-bucket']).toBe(bucketHash('address', address));
    }
    const limited = await call(t, 'GET', `/api/v1/webhooks/${w.webhook.id}/wrong`, undefined, address);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['x-ratelimit-scope']).toBe('user');
    expect(limited.headers['retry-after']).toBe('10');
    expect(limited.json()).toEqual({ message: 'You are being rate limited.', retry_after: 10, global: false, code: 0 });
    // Another address, and the right token from this one, are unaffected.
    expect((await call(t, 'GET', `/api/v1/webhooks/${w.webhook.id}/wrong`)).statusCode).toBe(401);
    expect((await call(t, 'GET', w.path, undefined, address)).statusCode).toBe(200);
    t.clock.set(start + 10_000);
    expect((await call(t, 'GET', `/api/v1/webhooks/${w.webhook.id}/wrong`, undefined, address)).statusCode).toBe(401);
  });
});
