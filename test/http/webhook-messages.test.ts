import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { call, createTestWebhook, recordEvents, type TestWebhook } from './webhook-url.fixtures.js';
import { userJson } from '../support/discord-resources.js';
import { actingOf } from '../support/acting.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function post(w: TestWebhook, body: Record<string, unknown>): Promise<Record<string, unknown> & { id: string }> {
  const res = await call(t, 'POST', `${w.path}?wait=true`, body);
  expect(res.statusCode).toBe(200);
  return res.json();
}

const messageUrl = (w: TestWebhook, id: string) => `${w.path}/messages/${id}`;

describe('GET /api/v1/webhooks/{id}/{token}/messages/{messageId}', () => {
  it('returns a message this webhook posted, as execute with wait did', async () => {
    const w = await createTestWebhook(t);
    const posted = await post(w, { content: 'hello', username: 'Nightly', embeds: [{ title: 'T' }] });
    const res = await call(t, 'GET', messageUrl(w, posted.id));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(posted);
  });

  it('any message not posted by this webhook is 404 10008: another webhook\'s, a person\'s, unknown, malformed', async () => {
    const w = await createTestWebhook(t);
    const sibling = await createTestWebhook(t, { channel: w.channel, name: 'Sibling' });
    const theirs = await post(sibling, { content: 'not yours' });
    // The server's owner (who made the webhook) posts in the channel as a person.
    const persons = await postMessage(t.services, actingOf({ kind: 'person', id: w.webhook.creatorId }), w.channel.id, 'a person wrote this');
    for (const id of [theirs.id, persons.id, '1', 'abc', '99999999999999999999']) {
      for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
        t.clock.advance(2000);
        const res = await call(t, method, messageUrl(w, id), method === 'PATCH' ? { content: 'hijack' } : undefined);
        expect(res.statusCode, `${method} ${id}`).toBe(404);
        expect(res.json()).toEqual({ code: 10008, message: 'Unknown Message' });
      }
    }
    const stored = await t.services.db.selectFrom('messages').select(['id', 'content']).where('channel_id', '=', w.channel.id).orderBy('id').execute();
    expect(stored.map((m) => m.content)).toEqual(['not yours', 'a person wrote this']);
  });
});

describe('PATCH /api/v1/webhooks/{id}/{token}/messages/{messageId}', () => {
  it('edits content and embeds under the rules of execute, keeps the author, sets edited_timestamp, and tells live views', async () => {
    const w = await createTestWebhook(t, { name: 'CI' });
    const posted = await post(w, { content: 'Build running', username: 'Build 12', avatarUrl: 'https://img.example/12.png' });
    const events = recordEvents(t, w.channel.id);
    t.clock.advance(5000);
    const res = await call(t, 'PATCH', messageUrl(w, posted.id), { content: 'Build passed', embeds: [{ title: 'Passed', color: 0x00ff00 }], username: 'Someone else', avatar_url: 'https://img.example/x.png' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ...posted,
      content: 'Build passed',
      embeds: [{ type: 'rich', title: 'Passed', color: 0x00ff00 }],
      author: userJson({ id: w.webhook.id, username: 'Build 12', global_name: null, avatar_url: 'https://img.example/12.png', bot: true }),
      edited_timestamp: new Date(t.clock.now()).toISOString(),
    });
    expect(events).toEqual([{ type: 'message_update', channelId: w.channel.id, messageId: posted.id }]);
    expect((await call(t, 'GET', messageUrl(w, posted.id))).json().content).toBe('Build passed');
  });

  it('leaves absent fields as they are', async () => {
    const w = await createTestWebhook(t);
    const posted = await post(w, { content: 'text', embeds: [{ title: 'keep me' }] });
    const contentOnly = await call(t, 'PATCH', messageUrl(w, posted.id), { content: 'new text' });
    expect(contentOnly.json()).toMatchObject({ content: 'new text', embeds: [{ title: 'keep me' }] });
    const embedsOnly = await call(t, 'PATCH', messageUrl(w, posted.id), { embeds: [{ description: 'replaced' }] });
    expect(embedsOnly.json()).toMatchObject({ content: 'new text', embeds: [{ description: 'replaced' }] });
    const cleared = await call(t, 'PATCH', messageUrl(w, posted.id), { embeds: null });
    expect(cleared.json()).toMatchObject({ content: 'new text', embeds: [] });
  });

  it('refuses an edit that would leave the message empty (50006) and changes nothing', async () => {
    const w = await createTestWebhook(t);
    const posted = await post(w, { content: 'only content' });
    for (const body of [{}, { content: '' }, { content: null }, { content: '', embeds: [] }, { username: 'x' }]) {
      const res = await call(t, 'PATCH', messageUrl(w, posted.id), body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toEqual({ code: 50006, message: 'Cannot send an empty message' });
    }
    t.clock.advance(2000);
    const withEmbed = await post(w, { embeds: [{ title: 'only an embed' }] });
    expect((await call(t, 'PATCH', messageUrl(w, withEmbed.id), { embeds: [] })).json().code).toBe(50006);
    expect((await call(t, 'PATCH', messageUrl(w, withEmbed.id), { content: 'now text', embeds: [] })).json()).toMatchObject({ content: 'now text', embeds: [] });
    expect((await call(t, 'GET', messageUrl(w, posted.id))).json()).toMatchObject({ content: 'only content', edited_timestamp: null });
  });

  it('applies the limits (2001 code points → 50035 at content)', async () => {
    const w = await createTestWebhook(t);
    const posted = await post(w, { content: 'short' });
    const res = await call(t, 'PATCH', messageUrl(w, posted.id), { content: '😀'.repeat(2001) });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.content._errors[0].code).toBe('BASE_TYPE_MAX_LENGTH');
  });
});

describe('DELETE /api/v1/webhooks/{id}/{token}/messages/{messageId}', () => {
  it('deletes the message (204), tells live views, and afterwards it is 404 10008', async () => {
    const w = await createTestWebhook(t);
    const posted = await post(w, { content: 'oops' });
    const events = recordEvents(t, w.channel.id);
    const res = await call(t, 'DELETE', messageUrl(w, posted.id));
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(events).toEqual([{ type: 'message_delete', channelId: w.channel.id, messageId: posted.id }]);
    expect((await call(t, 'GET', messageUrl(w, posted.id))).json()).toEqual({ code: 10008, message: 'Unknown Message' });
    expect((await call(t, 'DELETE', messageUrl(w, posted.id))).statusCode).toBe(404);
  });
});
