import { DiscordAPIError, REST } from '@discordjs/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/modules/directory/channels.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import type { ServedApp } from '../support/browser.js';
import { serveOwnedChannel } from '../support/served-channel.js';
import { actingOf } from '../support/acting.js';

/**
 * DESIGN §1's promise that Discord's client libraries work unchanged: @discordjs/rest v2, pointed
 * at {base_url}/api with version "1", against a listening server on the wall clock. It executes
 * with wait, edits, reads and deletes a message, sees our error codes as DiscordAPIError, and
 * honours our 429s (Retry-After, X-RateLimit-Reset-After) until every request has gone through.
 */

interface Message {
  id: string;
  content: string;
  edited_timestamp: string | null;
  author: { id: string; username: string; bot: boolean };
}

let served: ServedApp;
let channel: Channel;
let ownerId: string;
beforeAll(async () => {
  ({ served, channel, ownerId } = await serveOwnedChannel('Interop'));
});
afterAll(async () => served.close());

async function newWebhook(name: string): Promise<{ id: string; token: string }> {
  const { webhook, token } = await createWebhook(served.t.services, actingOf({ kind: 'person', id: ownerId }), channel, { name });
  return { id: webhook.id, token };
}

function client(): REST {
  return new REST({ api: `${served.baseUrl}/api`, version: '1', timeout: 15_000 });
}

describe('@discordjs/rest against the webhook URL routes', () => {
  it('executes with wait, edits, reads and deletes a message', async () => {
    const rest = client();
    const { id, token } = await newWebhook('Interop');
    const created = (await rest.post(`/webhooks/${id}/${token}`, {
      auth: false,
      query: new URLSearchParams({ wait: 'true' }),
      body: { content: 'Hello from discord.js', embeds: [{ title: 'Build', color: 0x5865f2 }], allowed_mentions: { parse: [] }, tts: false },
    })) as Message;
    expect(created).toMatchObject({ content: 'Hello from discord.js', edited_timestamp: null, author: { id, username: 'Interop', bot: true } });

    const edited = (await rest.patch(`/webhooks/${id}/${token}/messages/${created.id}`, { auth: false, body: { content: 'Edited' } })) as Message;
    expect(edited.content).toBe('Edited');
    expect(edited.edited_timestamp).not.toBeNull();
    expect(((await rest.get(`/webhooks/${id}/${token}/messages/${created.id}`, { auth: false })) as Message).content).toBe('Edited');

    await rest.delete(`/webhooks/${id}/${token}/messages/${created.id}`, { auth: false });
    const gone = await rest.get(`/webhooks/${id}/${token}/messages/${created.id}`, { auth: false }).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(DiscordAPIError);
    expect(gone).toMatchObject({ status: 404, code: 10008 });
  });

  it('sees a wrong token as DiscordAPIError 401 with code 50027', async () => {
    const { id } = await newWebhook('Wrong token');
    const error = await client()
      .post(`/webhooks/${id}/ghwt_wrong`, { auth: false, body: { content: 'x' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect(error).toMatchObject({ status: 401, code: 50027 });
  });

  it('honours the 429s: two senders sharing one webhook fire 15 executes, the server refuses some, and all finally succeed', async () => {
    const { id, token } = await newWebhook('Busy');
    const statuses: number[] = [];
    const senders = [client(), client()];
    for (const rest of senders) rest.on('response', (_request, response) => statuses.push(response.status));

    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        (senders[i % 2] as REST).post(`/webhooks/${id}/${token}`, { auth: false, query: new URLSearchParams({ wait: 'true' }), body: { content: `message ${i}` } }),
      ),
    );
    const elapsed = Date.now() - started;

    expect(results).toHaveLength(15);
    expect(new Set(results.map((m) => (m as Message).content)).size).toBe(15);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 200)).toHaveLength(15);
    // 10 per 2 s: the last 5 had to wait for the next window.
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    const stored = await served.t.services.db.selectFrom('messages').select('id').where('webhook_id', '=', id).execute();
    expect(stored).toHaveLength(15);
  }, 30_000);
});
