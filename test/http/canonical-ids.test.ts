import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { call, createTestWebhook } from './webhook-url.fixtures.js';

/**
 * Issue #36 §5: ids are accepted only in their canonical decimal form (core/snowflake.ts
 * isSnowflake). `0<id>` used to reach the row `<id>`, since both databases compare the path
 * argument as a number, so every resource answered under endless aliases; it is now an unknown
 * id, answered as any other malformed one (404 with the resource's "Unknown …" code).
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('issue #36 §5: an id with a leading zero names nothing', () => {
  it('GET and POST /api/v1/webhooks/0{id}/{token}: 404 Unknown Webhook, and nothing is posted', async () => {
    const w = await createTestWebhook(t);
    expect((await call(t, 'GET', w.path)).statusCode).toBe(200);
    for (const id of [`0${w.webhook.id}`, `00${w.webhook.id}`]) {
      const get = await call(t, 'GET', `/api/v1/webhooks/${id}/${w.token}`);
      expect(get.statusCode, id).toBe(404);
      expect(get.json()).toEqual({ code: 10015, message: 'Unknown Webhook' });
      const post = await call(t, 'POST', `/api/v1/webhooks/${id}/${w.token}`, { content: 'alias' });
      expect(post.statusCode, id).toBe(404);
    }
    const posted = await t.services.db.selectFrom('messages').select('id').where('channel_id', '=', w.channel.id).execute();
    expect(posted).toEqual([]);
  });
});
