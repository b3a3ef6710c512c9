import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { sign } from '@octokit/webhooks-methods';
import { IncomingWebhook } from '@slack/webhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/modules/directory/channels.js';
import { setGithubSecret } from '../../src/modules/webhooks/compat-execute.service.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import type { ServedApp } from '../support/browser.js';
import { serveOwnedChannel } from '../support/served-channel.js';
import { actingOf } from '../support/acting.js';
import { OPERATOR } from '../../src/core/actor.js';

/**
 * Issue #36 §2 with the real senders on a listening server: once a webhook has a GitHub secret, a
 * leaked URL alone cannot post through @slack/webhook or a plain execute, while GitHub's signed
 * deliveries (signed by @octokit/webhooks-methods, as GitHub signs) post, once each.
 */

const require = createRequire(import.meta.url);
const EXAMPLES = require('@octokit/webhooks-examples/api.github.com/index.json') as { name: string; examples: Record<string, unknown>[] }[];
const WATCH = EXAMPLES.find((e) => e.name === 'watch')?.examples[0] as Record<string, unknown>;
const SECRET = 'octo secret';

let served: ServedApp;
let channel: Channel;
let ownerId: string;
beforeAll(async () => {
  ({ served, channel, ownerId } = await serveOwnedChannel('Signed only'));
});
afterAll(async () => served.close());

async function authors(): Promise<(string | null)[]> {
  const rows = await served.t.services.db.selectFrom('messages').select('author_name').where('channel_id', '=', channel.id).orderBy('id').execute();
  return rows.map((r) => r.author_name);
}

describe('a webhook with a GitHub secret, driven by real senders', () => {
  it('@slack/webhook and a plain execute are refused (403); a GitHub-signed delivery posts once, its replay is 409', async () => {
    const { webhook, token } = await createWebhook(served.t.services, actingOf({ kind: 'person', id: ownerId }), channel, { name: 'Repo events' });
    await setGithubSecret(served.t.services, actingOf(OPERATOR), webhook.id, SECRET);
    const url = `${served.baseUrl}/api/v1/webhooks/${webhook.id}/${token}`;

    const slack = new IncomingWebhook(`${url}/slack`, { username: 'GitHub', icon_url: 'https://github.githubassets.com/favicons/favicon.png' });
    await expect(slack.send('Your repository was flagged: sign in at https://evil.example')).rejects.toMatchObject({ statusCode: 403, body: expect.stringContaining('accepts only signed GitHub deliveries') });

    const plain = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'forged', username: 'GitHub' }) });
    expect(plain.status).toBe(403);
    expect(((await plain.json()) as { code: number }).code).toBe(50013);

    const body = JSON.stringify(WATCH);
    const headers = { 'content-type': 'application/json', 'x-github-event': 'watch', 'x-github-delivery': randomUUID(), 'x-hub-signature-256': await sign(SECRET, body), 'user-agent': 'GitHub-Hookshot/044aadd' };
    const delivered = await fetch(`${url}/github`, { method: 'POST', headers, body });
    expect(delivered.status).toBe(204);
    const replayed = await fetch(`${url}/github`, { method: 'POST', headers, body });
    expect(replayed.status).toBe(409);

    expect(await authors()).toEqual(['GitHub']);
  });
});
