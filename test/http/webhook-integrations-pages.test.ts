import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { signedIn } from '../support/directory-fixtures.js';
import { stored } from '../support/stored.js';
import { personActingOf } from '../support/acting.js';

/** Issue #23 §4: the Integrations pages show the three URLs, and set a webhook's GitHub secret. */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const URL_VALUE = /value="(http:\/\/localhost:8080\/api\/v1\/webhooks\/\d+\/ghwt_[A-Za-z0-9_-]+)(\/slack|\/github)?"/g;

describe('Integrations pages: the three URLs', () => {
  it('on creation show the plain, Slack and GitHub URLs, each with a copy button, once', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Newsroom' });
    const channelId = server.channels[0]?.id as string;
    const page = `/channels/${channelId}/settings/integrations`;
    const res = await owner.agent.submitAndFollow(page, `${page}/webhooks`, { name: 'Feeds' });
    expect(res.statusCode).toBe(200);
    const urls = [...res.body.matchAll(URL_VALUE)].map((m) => `${m[1]}${m[2] ?? ''}`);
    expect(urls).toHaveLength(3);
    const plain = urls[0] as string;
    expect(urls).toEqual([plain, `${plain}/slack`, `${plain}/github`]);
    for (const id of ['webhook-url', 'webhook-url-slack', 'webhook-url-github']) expect(res.body).toContain(`data-copy="${id}"`);
    expect(res.body).toContain('Slack-compatible URL');
    expect(res.body).toContain('GitHub-compatible URL');
    // Each URL works.
    const path = new URL(plain).pathname;
    expect((await t.app.inject({ method: 'POST', url: `${path}/slack`, payload: { text: 'hi' } })).statusCode).toBe(200);
    // Never again.
    const again = await owner.agent.get(page);
    expect([...again.body.matchAll(URL_VALUE)]).toHaveLength(0);
  });

  it('regeneration shows the three new URLs', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Regen' });
    const page = `/servers/${server.id}/settings/integrations`;
    await owner.agent.submit(page, `${page}/webhooks`, { name: 'Feeds', channelId: server.channels[0]?.id as string });
    const [webhook] = await stored.serverWebhooks(t, server.id);
    const res = await owner.agent.submitAndFollow(`${page}/webhooks/${webhook?.id}/regenerate`, `${page}/webhooks/${webhook?.id}/regenerate`, {});
    expect([...res.body.matchAll(URL_VALUE)]).toHaveLength(3);
  });
});

describe("Integrations pages: a webhook's GitHub secret", () => {
  it('is set and removed from the settings page, never shown back', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Secrets' });
    const page = `/servers/${server.id}/settings/integrations`;
    await owner.agent.submit(page, `${page}/webhooks`, { name: 'Repo', channelId: server.channels[0]?.id as string });
    const [webhook] = await stored.serverWebhooks(t, server.id);
    const id = webhook?.id as string;
    const before = await owner.agent.get(page);
    expect(before.body).toContain(`id="github-secret-${id}"`);
    expect(before.body).toContain('No secret is set.');

    const saved = await owner.agent.submit(page, `${page}/webhooks/${id}/github-secret`, { githubSecret: 'correct horse' });
    expect(saved.statusCode).toBe(303);
    expect(await stored.githubSecret(t, id)).toBe('correct horse');
    const after = await owner.agent.get(page);
    expect(after.body).toContain('A secret is set.');
    expect(after.body).not.toContain('correct horse');
    // Issue #36 §2: the page says what a secret changes for the webhook's other URLs.
    expect(after.body).toContain('this webhook accepts only deliveries signed with it');
    expect(after.body).toContain('its plain and Slack URLs stop posting');
    expect(await stored.githubSecretAtRest(t, id)).not.toContain('correct horse');

    const tooLong = await owner.agent.submit(page, `${page}/webhooks/${id}/github-secret`, { githubSecret: 'x'.repeat(300) });
    expect(tooLong.statusCode).toBe(400);
    expect(await stored.githubSecret(t, id)).toBe('correct horse');

    await owner.agent.submit(page, `${page}/webhooks/${id}/github-secret`, { githubSecret: '' });
    expect(await stored.githubSecret(t, id)).toBeUndefined();
  });

  it('goes away with its webhook', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Gone' });
    const page = `/servers/${server.id}/settings/integrations`;
    await owner.agent.submit(page, `${page}/webhooks`, { name: 'Repo', channelId: server.channels[0]?.id as string });
    const [webhook] = await stored.serverWebhooks(t, server.id);
    const id = webhook?.id as string;
    await owner.agent.submit(page, `${page}/webhooks/${id}/github-secret`, { githubSecret: 'temp' });
    await owner.agent.submit(`${page}/webhooks/${id}/delete`, `${page}/webhooks/${id}/delete`, {});
    expect(await stored.githubSecret(t, id)).toBeUndefined();
  });
});
