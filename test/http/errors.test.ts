import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestWebhook } from './webhook-url.fixtures.js';

/**
 * The one error handler (src/http/error-handler.ts) and the JSON body parser (src/http/json-body.ts)
 * for input Fastify refuses before any route runs. Regressions found by the bad-input fuzzing of
 * issue #7 §5 (test/reliability/fuzz.test.ts).
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function messageCount(channelId: string): Promise<number> {
  const rows = await t.services.db.selectFrom('messages').select('id').where('channel_id', '=', BigInt(channelId) as never).execute();
  return rows.length;
}

describe('URLs the router cannot read', () => {
  it('a path with broken percent-encoding under /api/ answers 400 in the API error format, naming no Fastify internals', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/webhooks/%E0%A4%A/x' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.json()).toEqual({ code: 0, message: '400: Bad Request' });
  });

  it('the same on a page answers an HTML error page', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/servers/%zz/settings' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toMatch(/^<!doctype html>/i);
    expect(res.body).not.toContain('FST_ERR');
  });

  it('a path segment over 200 characters answers 414 in the format of where it was sent', async () => {
    const api = await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${'1'.repeat(201)}` });
    expect(api.statusCode).toBe(414);
    expect(api.json()).toEqual({ code: 0, message: '414: URI Too Long' });
    const page = await t.app.inject({ method: 'GET', url: `/servers/${'1'.repeat(201)}` });
    expect(page.statusCode).toBe(414);
    expect(page.body).toMatch(/^<!doctype html>/i);
    expect(page.body).not.toContain('FST_ERR');
  });
});

describe('JSON bodies', () => {
  it('a body that is not UTF-8 is refused as invalid JSON (400, 50109) and nothing is posted', async () => {
    const w = await createTestWebhook(t);
    const payload = Buffer.concat([Buffer.from('{"content":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    const res = await t.app.inject({ method: 'POST', url: `${w.path}?wait=true`, headers: { 'content-type': 'application/json' }, payload });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code: 50109, message: 'The request body contains invalid JSON.' });
    expect(await messageCount(w.channel.id)).toBe(0);
  });

  it('valid UTF-8 beyond ASCII still goes through, and prototype keys are still refused', async () => {
    const w = await createTestWebhook(t);
    const ok = await t.app.inject({ method: 'POST', url: `${w.path}?wait=true`, headers: { 'content-type': 'application/json; charset=utf-8' }, payload: Buffer.from('{"content":"héllo 😀"}') });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().content).toBe('héllo 😀');
    const polluted = await t.app.inject({ method: 'POST', url: w.path, headers: { 'content-type': 'application/json' }, payload: '{"content":"x","__proto__":{"admin":true}}' });
    expect(polluted.statusCode).toBe(400);
    expect(polluted.json()).toMatchObject({ code: 50109 });
    expect(await messageCount(w.channel.id)).toBe(1);
  });
});
