import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { sign } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setGithubSecret } from '../../src/modules/webhooks/compat-execute.service.js';
import { GITHUB_AVATAR_URL, GITHUB_EVENTS, GithubColors } from '../../src/modules/webhooks/github-events.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestWebhook, type TestWebhook } from './webhook-url.fixtures.js';
import { actingOf } from '../support/acting.js';
import { OPERATOR } from '../../src/core/actor.js';

/**
 * Issue #23 "Done when": the GitHub route with GitHub's real example payloads
 * (@octokit/webhooks-examples), signed as GitHub signs them (@octokit/webhooks-methods).
 */

interface ExampleSet {
  name: string;
  examples: Record<string, unknown>[];
}
const require = createRequire(import.meta.url);
const EXAMPLES = require('@octokit/webhooks-examples/api.github.com/index.json') as ExampleSet[];

function example(event: string, index: number): Record<string, unknown> {
  const found = EXAMPLES.find((e) => e.name === event)?.examples[index];
  if (!found) throw new Error(`no example ${event}[${index}]`);
  return found;
}

let t: TestApp;
let address = 0;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function deliver(w: TestWebhook, event: string, body: unknown, options: { secret?: string; signature?: string; query?: string; deliveryId?: string } = {}) {
  const text = JSON.stringify(body);
  // Each delivery its own GUID, as GitHub sends (a repeated one is a replay, issue #36 §2).
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': options.deliveryId ?? randomUUID(), 'user-agent': 'GitHub-Hookshot/044aadd' };
  if (options.secret !== undefined) headers['x-hub-signature-256'] = await sign(options.secret, text);
  if (options.signature !== undefined) headers['x-hub-signature-256'] = options.signature;
  // Every delivery is a fresh request: a new second of the clock keeps the bucket out of the way.
  t.clock.advance(2000);
  address += 1;
  return t.app.inject({ method: 'POST', url: `${w.path}/github${options.query ?? ''}`, headers, payload: text, remoteAddress: `10.23.${address >> 8}.${address & 255}` });
}

async function lastMessage(w: TestWebhook) {
  const row = await t.services.db.selectFrom('messages').selectAll().where('channel_id', '=', w.channel.id).orderBy('id', 'desc').limit(1).executeTakeFirst();
  return row ? { ...row, embeds: JSON.parse(String(row.embeds)) as Record<string, unknown>[] } : undefined;
}

async function messageCount(w: TestWebhook): Promise<number> {
  const rows = await t.services.db.selectFrom('messages').select('id').where('channel_id', '=', w.channel.id).execute();
  return rows.length;
}

const CODERTOCAT = { name: 'Codertocat', url: 'https://github.com/Codertocat', iconUrl: 'https://avatars1.githubusercontent.com/u/21031067?v=4' };

/** For each event: the example rendered, and the embed it must become. */
const RENDERED: { event: (typeof GITHUB_EVENTS)[number]; index: number; title: string; url: string; color: number; description?: RegExp; author?: string }[] = [
  { event: 'push', index: 4, title: '[Hello-World:master] 1 new commit', url: 'https://github.com/Codertocat/Hello-World/commit/6113728f27ae82c7b1a177c8d03f9e96e0adf246', color: GithubColors.push, description: /^\[`6113728`\]\(https:\/\/github\.com\/Codertocat\/Hello-World\/commit\/6113728f27ae82c7b1a177c8d03f9e96e0adf246\) / },
  { event: 'pull_request', index: 0, title: '[Codertocat/Hello-World] Pull request opened: #2 Update the README with new information.', url: 'https://github.com/Codertocat/Hello-World/pull/2', color: GithubColors.opened, description: /^This is a pretty simple change/ },
  { event: 'pull_request_review', index: 0, title: '[Codertocat/Hello-World] Pull request review submitted: #2 Update the README with new information.', url: 'https://github.com/Codertocat/Hello-World/pull/2#pullrequestreview-237895671', color: GithubColors.comment },
  { event: 'pull_request_review_comment', index: 0, title: '[Codertocat/Hello-World] New review comment on pull request #2: Update the README with new information.', url: 'https://github.com/Codertocat/Hello-World/pull/2#discussion_r284312630', color: GithubColors.comment, description: /\S/ },
  { event: 'issues', index: 15, title: '[Codertocat/Hello-World] Issue opened: #1 Spelling error in the README file', url: 'https://github.com/Codertocat/Hello-World/issues/1', color: GithubColors.opened, description: /accidently spelled 'commit'/ },
  { event: 'issue_comment', index: 0, title: '[Codertocat/Hello-World] New comment on issue #1: Spelling error in the README file', url: 'https://github.com/Codertocat/Hello-World/issues/1#issuecomment-492700400', color: GithubColors.comment, description: /^You are totally right!/ },
  { event: 'commit_comment', index: 0, title: '[Codertocat/Hello-World] New comment on commit `6113728`', url: 'https://github.com/Codertocat/Hello-World/commit/6113728f27ae82c7b1a177c8d03f9e96e0adf246#commitcomment-33548674', color: GithubColors.comment, description: /^This is a really good change/ },
  { event: 'create', index: 0, title: '[Codertocat/Hello-World] New tag created: simple-tag', url: 'https://github.com/Codertocat/Hello-World/tree/simple-tag', color: GithubColors.opened },
  { event: 'delete', index: 0, title: '[Codertocat/Hello-World] Tag deleted: simple-tag', url: 'https://github.com/Codertocat/Hello-World', color: GithubColors.closed },
  { event: 'fork', index: 0, title: '[Codertocat/Hello-World] Fork created: Octocoders/Hello-World', url: 'https://github.com/Octocoders/Hello-World', color: GithubColors.neutral, author: 'Octocoders' },
  { event: 'watch', index: 0, title: '[Codertocat/Hello-World] New star added', url: 'https://github.com/Codertocat/Hello-World', color: GithubColors.star },
  { event: 'release', index: 0, title: '[Codertocat/Hello-World] New release published: 0.0.1', url: 'https://github.com/Codertocat/Hello-World/releases/tag/0.0.1', color: GithubColors.release },
  { event: 'member', index: 0, title: '[Codertocat/Hello-World] New collaborator added: hacktocat', url: 'https://github.com/hacktocat', color: GithubColors.opened, author: 'hacktocat' },
  { event: 'public', index: 0, title: '[Codertocat/Hello-World] Now open sourced! 🎉', url: 'https://github.com/Codertocat/Hello-World', color: GithubColors.opened },
  { event: 'check_run', index: 1, title: '[Codertocat/Hello-World] Check Octocoders-linter failure on changes', url: 'https://github.com/Codertocat/Hello-World/runs/128620228', color: GithubColors.failure },
  { event: 'check_suite', index: 0, title: '[Codertocat/Hello-World] CI suite success on changes', url: 'https://github.com/Codertocat/Hello-World/commit/ec26c3e57ca3a959ca5aad62de7213c562f8c821', color: GithubColors.success, description: /^Commit `ec26c3e`$/ },
  { event: 'discussion', index: 0, title: '[octo-org/octo-repo] New discussion: #90 Welcome to discussions!', url: 'https://github.com/octo-org/octo-repo/discussions/90', color: GithubColors.opened, description: /^We're glad to have you here!$/ },
  { event: 'discussion_comment', index: 0, title: '[octo-org/octo-repo] New comment on discussion #90: Welcome to discussions!', url: 'https://github.com/octo-org/octo-repo/discussions/90#discussioncomment-544078', color: GithubColors.comment, description: /^I have so many questions/ },
  { event: 'workflow_run', index: 1, title: '[octo-org/octo-repo] Workflow test success on master', url: 'https://github.com/octo-org/octo-repo/actions/runs/289782451', color: GithubColors.success, description: /^ci\(action\): update actions\/setup-node/ },
];

describe('POST /api/v1/webhooks/{id}/{token}/github: GitHub example payloads rendered', () => {
  it('covers every event the route lists', () => {
    expect(RENDERED.map((r) => r.event).sort()).toEqual([...GITHUB_EVENTS].sort());
  });

  for (const r of RENDERED) {
    it(`${r.event}: posts "${r.title}"`, async () => {
      const w = await createTestWebhook(t, { name: 'Repo feed' });
      const res = await deliver(w, r.event, example(r.event, r.index));
      expect(res.statusCode, res.body).toBe(204);
      expect(res.headers['x-gatehouse-not-posted']).toBeUndefined();
      const message = await lastMessage(w);
      expect(message).toMatchObject({ content: '', author_name: 'GitHub', author_avatar_url: GITHUB_AVATAR_URL });
      expect(message?.embeds).toHaveLength(1);
      const embed = message?.embeds[0] ?? {};
      expect(embed).toMatchObject({ title: r.title, url: r.url, color: r.color });
      const author = embed['author'] as Record<string, unknown>;
      expect(author['name']).toBe(r.author ?? CODERTOCAT.name);
      if (r.author === undefined) expect(author['url']).toBe(CODERTOCAT.url);
      if (r.description) expect(String(embed['description'])).toMatch(r.description);
      else expect(embed['description']).toBeUndefined();
    });
  }

  it('push lists at most the first five commits, then how many more', async () => {
    const w = await createTestWebhook(t);
    const push = structuredClone(example('push', 4));
    const commit = (push['commits'] as Record<string, unknown>[])[0] as Record<string, unknown>;
    push['commits'] = Array.from({ length: 7 }, (_, i) => ({ ...commit, id: `${i}${'a'.repeat(39)}`, message: `change ${i}\n\nbody` }));
    expect((await deliver(w, 'push', push)).statusCode).toBe(204);
    const embed = (await lastMessage(w))?.embeds[0] ?? {};
    expect(embed['title']).toBe('[Hello-World:master] 7 new commits');
    const lines = String(embed['description']).split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[0]).toMatch(/^\[`0aaaaaa`\]\(.*\) change 0 - Codertocat$/);
    expect(lines[5]).toBe('… and 2 more');
  });

  it('pull_request closed with merged: true is "merged" in purple', async () => {
    const w = await createTestWebhook(t);
    const closed = structuredClone(example('pull_request', 3));
    (closed['pull_request'] as Record<string, unknown>)['merged'] = true;
    await deliver(w, 'pull_request', closed);
    expect((await lastMessage(w))?.embeds[0]).toMatchObject({ title: '[Codertocat/Hello-World] Pull request merged: #2 Update the README with new information.', color: GithubColors.merged });
  });

  it('a sender whose login fails the embed author rule (passes for the service, "system") still posts, without the author line', async () => {
    const w = await createTestWebhook(t);
    for (const login of ['system', 'Gatehouse']) {
      const star = structuredClone(example('watch', 0));
      (star['sender'] as Record<string, unknown>)['login'] = login;
      expect((await deliver(w, 'watch', star)).statusCode).toBe(204);
      const embed = (await lastMessage(w))?.embeds[0] ?? {};
      expect(embed['title']).toBe('[Codertocat/Hello-World] New star added');
      expect(embed['author']).toBeUndefined();
    }
  });

  it('with wait=true answers the created message', async () => {
    const w = await createTestWebhook(t);
    const res = await deliver(w, 'watch', example('watch', 0), { query: '?wait=true' });
    expect(res.statusCode).toBe(200);
    expect(res.json().embeds[0].title).toBe('[Codertocat/Hello-World] New star added');
  });
});

describe('GitHub deliveries with nothing to post', () => {
  it('answers ping 204, posts nothing, and says why in X-Gatehouse-Not-Posted', async () => {
    const w = await createTestWebhook(t);
    const res = await deliver(w, 'ping', example('ping', 0));
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-gatehouse-not-posted']).toBe('ping');
    expect(await messageCount(w)).toBe(0);
  });

  it('a check_run that is not completed, a push of 0 commits and an unknown event post nothing, each with its reason', async () => {
    const w = await createTestWebhook(t);
    const created = await deliver(w, 'check_run', example('check_run', 0));
    expect(created.statusCode).toBe(204);
    expect(created.headers['x-gatehouse-not-posted']).toBe('check_run created is not completed');
    const empty = { ...example('push', 4), commits: [] };
    expect((await deliver(w, 'push', empty)).headers['x-gatehouse-not-posted']).toBe('push of 0 commits');
    const unknown = await deliver(w, 'sponsorship', example('sponsorship', 0));
    expect(unknown.statusCode).toBe(204);
    expect(unknown.headers['x-gatehouse-not-posted']).toBe('event sponsorship is not posted');
    const labeled = await deliver(w, 'issues', example('issues', 9));
    expect(labeled.headers['x-gatehouse-not-posted']).toBe('issues action labeled is not posted');
    expect(await messageCount(w)).toBe(0);
  });

  it('accepts every example payload of @octokit/webhooks-examples (github.com and every GHES version) without a 5xx, signed, with a secret set', async () => {
    const w = await createTestWebhook(t);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, 'It\'s a Secret to Everybody');
    let delivered = 0;
    // The examples repeat some payloads word for word; a signed body seen before is a replay (409, issue #36 §2).
    const seen = new Set<string>();
    for (const folder of ['api.github.com', 'ghes-31', 'ghes-32', 'ghes-33', 'ghes-34', 'ghes-35']) {
      const sets = require(`@octokit/webhooks-examples/${folder}/index.json`) as ExampleSet[];
      for (const set of sets) {
        for (const [index, body] of set.examples.entries()) {
          const res = await deliver(w, set.name, body, { secret: 'It\'s a Secret to Everybody' });
          const text = JSON.stringify(body);
          expect(seen.has(text) ? [409] : [200, 204], `${folder} ${set.name}[${index}]: ${res.body}`).toContain(res.statusCode);
          seen.add(text);
          delivered += 1;
        }
      }
    }
    expect(delivered).toBe(726);
  });
});

describe('GitHub secret (X-Hub-Signature-256)', () => {
  it('without a secret set, deliveries need no signature', async () => {
    const w = await createTestWebhook(t);
    expect((await deliver(w, 'watch', example('watch', 0))).statusCode).toBe(204);
    expect(await messageCount(w)).toBe(1);
  });

  it('with a secret set, a correctly signed delivery posts; a missing or wrong signature is 401 and posts nothing', async () => {
    const w = await createTestWebhook(t);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, 'hunter2');
    const missing = await deliver(w, 'watch', example('watch', 0));
    expect(missing.statusCode).toBe(401);
    expect(missing.json().message).toMatch(/X-Hub-Signature-256 header is missing/);
    const wrong = await deliver(w, 'watch', example('watch', 0), { secret: 'not-the-secret' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().message).toMatch(/does not match/);
    expect(await messageCount(w)).toBe(0);
    expect((await deliver(w, 'watch', example('watch', 0), { secret: 'hunter2' })).statusCode).toBe(204);
    expect(await messageCount(w)).toBe(1);
  });

  it('removing the secret (empty value) stops the check', async () => {
    const w = await createTestWebhook(t);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, 'hunter2');
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, '');
    expect((await deliver(w, 'watch', example('watch', 0))).statusCode).toBe(204);
  });
});

describe('GitHub route, requests', () => {
  it("accepts GitHub's form content type (payload=<json>) and verifies its signature over the form body", async () => {
    const w = await createTestWebhook(t);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, 's3cret');
    const form = `payload=${encodeURIComponent(JSON.stringify(example('watch', 0)))}`;
    t.clock.advance(2000);
    const res = await t.app.inject({
      method: 'POST',
      url: `${w.path}/github`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-github-event': 'watch', 'x-github-delivery': randomUUID(), 'x-hub-signature-256': await sign('s3cret', form) },
      payload: form,
    });
    expect(res.statusCode).toBe(204);
    expect(await messageCount(w)).toBe(1);
  });

  it('invalid JSON is a 400 (50109), a wrong token 401, with the rate-limit headers', async () => {
    const w = await createTestWebhook(t);
    t.clock.advance(2000);
    const bad = await t.app.inject({ method: 'POST', url: `${w.path}/github`, headers: { 'content-type': 'application/json', 'x-github-event': 'push' }, payload: '{"nope' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe(50109);
    expect(bad.headers['x-ratelimit-limit']).toBe('10');
    const wrong = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${w.webhook.id}/nope/github`, headers: { 'content-type': 'application/json', 'x-github-event': 'ping' }, payload: '{}', remoteAddress: '10.99.0.1' });
    expect(wrong.statusCode).toBe(401);
  });
});
