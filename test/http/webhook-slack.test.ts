import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { call, createTestWebhook } from './webhook-url.fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function stored(channelId: string) {
  return t.services.db.selectFrom('messages').selectAll().where('channel_id', '=', channelId).orderBy('id').execute();
}

describe('POST /api/v1/webhooks/{id}/{token}/slack', () => {
  it('posts Slack text as markdown and, with wait defaulting to true, answers the message', async () => {
    const w = await createTestWebhook(t, { name: 'Alerts' });
    const res = await call(t, 'POST', `${w.path}/slack`, { text: '*Disk* almost full on <https://grafana.example/d/1|db-1> <!here>' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBe('10');
    const message = res.json();
    expect(message.content).toBe('**Disk** almost full on [db-1](https://grafana.example/d/1) @here');
    const rows = await stored(w.channel.id);
    expect(rows.map((r) => r.content)).toEqual([message.content]);
    expect(rows[0]).toMatchObject({ author_name: 'Alerts' });
  });

  it("with wait=false answers Slack's own 200 `ok` as text/plain", async () => {
    const w = await createTestWebhook(t);
    const res = await call(t, 'POST', `${w.path}/slack?wait=false`, { text: 'quiet' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toBe('ok');
    expect((await stored(w.channel.id)).map((r) => r.content)).toEqual(['quiet']);
  });

  it('uses username and icon_url as the author of this message', async () => {
    const w = await createTestWebhook(t, { name: 'Hook' });
    await call(t, 'POST', `${w.path}/slack`, { text: 'hi', username: 'Nagios', icon_url: 'https://img.example/nagios.png' });
    expect((await stored(w.channel.id))[0]).toMatchObject({ author_name: 'Nagios', author_avatar_url: 'https://img.example/nagios.png' });
  });

  it('maps attachments to embeds in the stored message', async () => {
    const w = await createTestWebhook(t);
    const res = await call(t, 'POST', `${w.path}/slack`, { attachments: [{ color: 'good', title: 'Deployed', title_link: 'https://ci.example/7', fields: [{ title: 'Env', value: 'prod', short: true }] }] });
    expect(res.statusCode).toBe(200);
    const embeds = JSON.parse(String((await stored(w.channel.id))[0]?.embeds));
    expect(embeds).toEqual([{ title: 'Deployed', url: 'https://ci.example/7', color: 0x2eb886, fields: [{ name: 'Env', value: 'prod', inline: true }] }]);
  });

  it('accepts Slack\'s legacy form encoding payload=<json>', async () => {
    const w = await createTestWebhook(t);
    const res = await t.app.inject({ method: 'POST', url: `${w.path}/slack`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `payload=${encodeURIComponent(JSON.stringify({ text: 'form' }))}` });
    expect(res.statusCode).toBe(200);
    expect((await stored(w.channel.id)).map((r) => r.content)).toEqual(['form']);
  });

  it('a payload that maps to nothing is a 400 with a clear message, and posts nothing', async () => {
    const w = await createTestWebhook(t);
    const res = await call(t, 'POST', `${w.path}/slack`, { blocks: [{ type: 'actions', elements: [] }] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 50006, message: expect.stringContaining('Slack payload') });
    expect(await stored(w.channel.id)).toEqual([]);
  });

  it('refuses a username that passes for the service, as plain execute does', async () => {
    const w = await createTestWebhook(t);
    const res = await call(t, 'POST', `${w.path}/slack`, { text: 'hi', username: t.services.config.serviceName });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 50035, errors: { username: { _errors: [{ code: 'USERNAME_INVALID' }] } } });
  });

  it('checks the token and shares the webhook bucket with plain execute', async () => {
    const w = await createTestWebhook(t);
    expect((await call(t, 'POST', `/api/v1/webhooks/${w.webhook.id}/wrong/slack`, { text: 'x' })).statusCode).toBe(401);
    expect((await call(t, 'POST', `/api/v1/webhooks/1/${w.token}/slack`, { text: 'x' })).statusCode).toBe(404);
    for (let i = 0; i < 5; i++) await call(t, 'POST', w.path, { content: `plain ${i}` });
    for (let i = 0; i < 5; i++) expect((await call(t, 'POST', `${w.path}/slack`, { text: `slack ${i}` })).statusCode).toBe(200);
    const limited = await call(t, 'POST', `${w.path}/slack`, { text: 'one too many' });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    t.clock.advance(2000);
  });
});
