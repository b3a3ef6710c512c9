import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { sign } from '@octokit/webhooks-methods';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, sealingKey } from '../../src/core/sealed.js';
import { DAY } from '../../src/core/clock.js';
import { sealPlainGithubSecrets, setGithubSecret } from '../../src/modules/webhooks/compat-execute.service.js';
import { runMaintenance } from '../../src/storage/maintenance.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { stored } from '../support/stored.js';
import { createTestWebhook, type TestWebhook } from './webhook-url.fixtures.js';
import { actingOf } from '../support/acting.js';
import { OPERATOR } from '../../src/core/actor.js';

/**
 * Issue #36 §2: a webhook with a GitHub secret takes only signed, new GitHub deliveries, so its URL
 * alone cannot post, edit or delete a message (docs/webhooks.md "GitHub secret"); the secret is
 * sealed with the server secret at rest; a replayed delivery posts nothing. Issue #36 §4: /slack
 * and /github bound their bodies like the plain route.
 */

interface ExampleSet {
  name: string;
  examples: Record<string, unknown>[];
}
const require = createRequire(import.meta.url);
const EXAMPLES = require('@octokit/webhooks-examples/api.github.com/index.json') as ExampleSet[];
const WATCH = EXAMPLES.find((e) => e.name === 'watch')?.examples[0] as Record<string, unknown>;
const SECRET = "It's a Secret to Everybody";

let t: TestApp;
let address = 0;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** Every request from its own address, a fresh bucket second later (the bucket is tested elsewhere). */
function inject(options: { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string; headers?: Record<string, string>; payload?: string | Record<string, unknown> }) {
  t.clock.advance(2000);
  address += 1;
  return t.app.inject({ ...options, remoteAddress: `10.36.${address >> 8}.${address & 255}` });
}

async function deliver(w: TestWebhook, body: unknown, options: { secret?: string; deliveryId?: string | null; event?: string } = {}) {
  const text = JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-github-event': options.event ?? 'watch' };
  if (options.deliveryId !== null) headers['x-github-delivery'] = options.deliveryId ?? randomUUID();
  if (options.secret !== undefined) headers['x-hub-signature-256'] = await sign(options.secret, text);
  return inject({ method: 'POST', url: `${w.path}/github?wait=true`, headers, payload: text });
}

/** A different signed body each time: a star by another user. */
function star(n: number): Record<string, unknown> {
  return { ...WATCH, sender: { ...(WATCH['sender'] as object), login: `stargazer-${n}` } };
}

async function messages(w: TestWebhook) {
  return t.services.db.selectFrom('messages').select(['id', 'content', 'author_name']).where('channel_id', '=', w.channel.id).orderBy('id').execute();
}

describe('a webhook with a GitHub secret accepts only signed GitHub deliveries (issue #36 §2)', () => {
  it('refuses plain execute, /slack, and editing or deleting a message with 403 (50013), and posts or changes nothing', async () => {
    const w = await createTestWebhook(t);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, SECRET);
    const genuine = await deliver(w, star(1), { secret: SECRET });
    expect(genuine.statusCode).toBe(200);
    const messageId = genuine.json<{ id: string }>().id;

    const forged = { content: 'Please rotate your password at https://evil.example', username: 'GitHub', avatar_url: 'https://github.githubassets.com/images/modules/logos_page/GitHub-Mark.png' };
    const answers = [
      await inject({ method: 'POST', url: `${w.path}?wait=true`, payload: forged }),
      await inject({ method: 'POST', url: `${w.path}/slack`, payload: { text: forged.content, username: 'GitHub' } }),
      await inject({ method: 'POST', url: `${w.path}/slack`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `payload=${encodeURIComponent(JSON.stringify({ text: 'forged' }))}` }),
      await inject({ method: 'PATCH', url: `${w.path}/messages/${messageId}`, payload: { content: forged.content } }),
      await inject({ method: 'DELETE', url: `${w.path}/messages/${messageId}` }),
    ];
    for (const answer of answers) {
      expect(answer.statusCode).toBe(403);
      expect(answer.json()).toMatchObject({ code: 50013, message: expect.stringMatching(/accepts only signed GitHub deliveries/) });
      expect(answer.headers['x-ratelimit-limit']).toBe('10');
    }
    const after = await messages(w);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ id: expect.anything(), author_name: 'GitHub' });
    expect(after[0]?.content).not.toContain('evil.example');
  });

  it('still lets the URL read the webhook and its messages, rename it and delete it (they forge no message)', async () => {
    const w = await createTestWebhook(t);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, SECRET);
    const genuine = await deliver(w, star(2), { secret: SECRET });
    const messageId = genuine.json<{ id: string }>().id;
    expect((await inject({ method: 'GET', url: w.path })).statusCode).toBe(200);
    expect((await inject({ method: 'GET', url: `${w.path}/messages/${messageId}` })).statusCode).toBe(200);
    expect((await inject({ method: 'PATCH', url: w.path, payload: { name: 'CI' } })).json()).toMatchObject({ name: 'CI' });
    expect((await inject({ method: 'DELETE', url: w.path })).statusCode).toBe(204);
  });

  it('once the secret is removed, the plain routes post again; once set again, they stop again', async () => {
    const w = await createTestWebhook(t);
    // A first execute: on PostgreSQL the instance now remembers the webhook without a secret.
    expect((await inject({ method: 'POST', url: w.path, payload: { content: 'before' } })).statusCode).toBe(204);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, SECRET);
    expect((await inject({ method: 'POST', url: w.path, payload: { content: 'while signed only' } })).statusCode).toBe(403);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, '');
    expect((await inject({ method: 'POST', url: w.path, payload: { content: 'after' } })).statusCode).toBe(204);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, 'another secret');
    expect((await inject({ method: 'POST', url: w.path, payload: { content: 'signed only again' } })).statusCode).toBe(403);
    expect((await messages(w)).map((m) => m.content)).toEqual(['before', 'after']);
  });

  it('without a secret, nothing changes: plain execute, /slack and message edits work', async () => {
    const w = await createTestWebhook(t);
    const posted = await inject({ method: 'POST', url: `${w.path}?wait=true`, payload: { content: 'hello' } });
    expect(posted.statusCode).toBe(200);
    expect((await inject({ method: 'POST', url: `${w.path}/slack`, payload: { text: 'from slack' } })).statusCode).toBe(200);
    expect((await inject({ method: 'PATCH', url: `${w.path}/messages/${posted.json<{ id: string }>().id}`, payload: { content: 'edited' } })).statusCode).toBe(200);
  });
});

describe('the GitHub secret is sealed with the server secret (issue #36 §2)', () => {
  it('is stored sealed, bound to its webhook: the database never holds it in plain text', async () => {
    const w = await createTestWebhook(t);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, SECRET);
    const atRest = await stored.githubSecretAtRest(t, w.webhook.id);
    expect(atRest).toBeDefined();
    expect(atRest).not.toContain(SECRET);
    expect(Buffer.from(atRest as string, 'base64').toString('latin1')).not.toContain(SECRET);
    const key = sealingKey(t.services.secrets[0], 'webhook-github-secret');
    expect(open(key, atRest as string, w.webhook.id)).toBe(SECRET);
    // Copied onto another webhook's row, it does not open.
    expect(open(key, atRest as string, `${w.webhook.id}1`)).toBeUndefined();
    expect(await stored.githubSecret(t, w.webhook.id)).toBe(SECRET);
  });

  it('a secret still in plain text (set before sealing, carried over by the migration) verifies and is sealed at its first delivery', async () => {
    const w = await createTestWebhook(t);
    await t.services.db.updateTable('webhooks').set({ github_secret_sealed: `plain:${SECRET}` }).where('id', '=', w.webhook.id).execute();
    expect((await inject({ method: 'POST', url: w.path, payload: { content: 'forged' } })).statusCode).toBe(403);
    expect((await deliver(w, star(3))).statusCode).toBe(401);
    expect((await deliver(w, star(3), { secret: SECRET })).statusCode).toBe(200);
    const atRest = await stored.githubSecretAtRest(t, w.webhook.id);
    expect(atRest).not.toContain(SECRET);
    expect(await stored.githubSecret(t, w.webhook.id)).toBe(SECRET);
  });

  it('secrets still in plain text are all sealed when the app starts, without waiting for a delivery', async () => {
    const w = await createTestWebhook(t);
    // As migration 2026-11-27-10 leaves a secret set before sealing.
    await t.services.db.updateTable('webhooks').set({ github_secret_sealed: `plain:${SECRET}` }).where('id', '=', w.webhook.id).execute();
    if (process.env['TEST_DATABASE_URL']) {
      // Another instance starting on this database seals it (buildApp's onReady).
      const other = await createTestApp({ sameDatabaseAs: t });
      await other.close();
    } else {
      // One SQLite in-memory database has one connection: the start-up step itself.
      console.warn('webhook-github-signed-only.test.ts: sealing by a starting instance is tested on PostgreSQL (TEST_DATABASE_URL); here the step it runs');
      expect(await sealPlainGithubSecrets(t.services)).toBeGreaterThanOrEqual(1);
    }
    expect(await stored.githubSecretAtRest(t, w.webhook.id)).not.toContain(SECRET);
    expect(await stored.githubSecret(t, w.webhook.id)).toBe(SECRET);
  });

  it('a secret that opens with no server secret (GATEHOUSE_SECRET replaced) is a 401 saying to set it again, never a 5xx', async () => {
    const w = await createTestWebhook(t);
    await t.services.db.updateTable('webhooks').set({ github_secret_sealed: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }).where('id', '=', w.webhook.id).execute();
    const res = await deliver(w, star(4), { secret: SECRET });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toMatch(/set it again/);
    expect(await messages(w)).toHaveLength(0);
  });
});

describe('a replayed GitHub delivery posts nothing (issue #36 §2)', () => {
  it('the same X-GitHub-Delivery id again is 409, even with another signed body', async () => {
    const w = await createTestWebhook(t);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, SECRET);
    const id = randomUUID();
    expect((await deliver(w, star(10), { secret: SECRET, deliveryId: id })).statusCode).toBe(200);
    const replay = await deliver(w, star(10), { secret: SECRET, deliveryId: id });
    expect(replay.statusCode).toBe(409);
    expect(replay.json().message).toMatch(/Replayed GitHub delivery/);
    expect((await deliver(w, star(11), { secret: SECRET, deliveryId: id })).statusCode).toBe(409);
    expect(await messages(w)).toHaveLength(1);
  });

  it('the same signed body under a new delivery id is 409 too: the id is not signed', async () => {
    const w = await createTestWebhook(t);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, SECRET);
    expect((await deliver(w, star(12), { secret: SECRET })).statusCode).toBe(200);
    expect((await deliver(w, star(12), { secret: SECRET })).statusCode).toBe(409);
    expect(await messages(w)).toHaveLength(1);
  });

  it('a signed delivery without X-GitHub-Delivery is 400 and posts nothing', async () => {
    const w = await createTestWebhook(t);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, SECRET);
    const res = await deliver(w, star(13), { secret: SECRET, deliveryId: null });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/X-GitHub-Delivery/);
    expect(await messages(w)).toHaveLength(0);
  });

  it('another webhook may receive the same delivery id (ids are remembered per webhook)', async () => {
    const [a, b] = [await createTestWebhook(t), await createTestWebhook(t)];
    await setGithubSecret(t.services, actingOf(OPERATOR), a.webhook.id, SECRET);
    await setGithubSecret(t.services, actingOf(OPERATOR), b.webhook.id, SECRET);
    const id = randomUUID();
    expect((await deliver(a, star(14), { secret: SECRET, deliveryId: id })).statusCode).toBe(200);
    expect((await deliver(b, star(14), { secret: SECRET, deliveryId: id })).statusCode).toBe(200);
  });

  it('deliveries are remembered for 7 days, then forgotten by the maintenance job', async () => {
    const w = await createTestWebhook(t);
    await setGithubSecret(t.services, actingOf(OPERATOR), w.webhook.id, SECRET);
    const id = randomUUID();
    expect((await deliver(w, star(15), { secret: SECRET, deliveryId: id })).statusCode).toBe(200);
    const deps = { db: t.services.db, dialect: t.services.dialect, clock: t.clock, logger: pino({ level: 'silent' }), messageRetentionDays: 0 };
    t.clock.advance(6 * DAY);
    await runMaintenance(deps, 'replay-test');
    expect((await deliver(w, star(15), { secret: SECRET, deliveryId: id })).statusCode).toBe(409);
    t.clock.advance(DAY + 60_000);
    const report = await runMaintenance(deps, 'replay-test');
    expect(report?.purged.webhook_github_deliveries).toBeGreaterThanOrEqual(1);
    expect((await deliver(w, star(15), { secret: SECRET, deliveryId: id })).statusCode).toBe(200);
  });
});

describe('/slack and /github bound their bodies like the plain route (issue #36 §4)', () => {
  const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it('/slack reads at most 537 KiB (413, code 40005)', async () => {
    const w = await createTestWebhook(t);
    const res = await inject({ method: 'POST', url: `${w.path}/slack`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ text: 'a'.repeat(600 * 1024) }) });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe(40005);
  });

  it("/slack's form payload= nested deeper than 32 levels is invalid JSON (400, 50109)", async () => {
    const w = await createTestWebhook(t);
    const payload = JSON.stringify({ text: 'hi', attachments: JSON.parse(deep(40)) as unknown });
    const res = await inject({ method: 'POST', url: `${w.path}/slack`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `payload=${encodeURIComponent(payload)}` });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(50109);
    expect(await messages(w)).toHaveLength(0);
  });

  it("/slack's form payload= with a control character in a field is 400 (50035) naming the field, and posts nothing", async () => {
    const w = await createTestWebhook(t);
    const res = await inject({ method: 'POST', url: `${w.path}/slack`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `payload=${encodeURIComponent('{"text":"a\\u0000b"}')}` });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 50035, errors: { payload: { text: { _errors: [{ code: 'BASE_TYPE_INVALID' }] } } } });
    expect(await messages(w)).toHaveLength(0);
  });

  it('/github JSON nested deeper than 32 levels is invalid JSON (400, 50109), as JSON or as form payload=', async () => {
    const w = await createTestWebhook(t);
    const body = JSON.stringify({ ...WATCH, extra: JSON.parse(deep(40)) as unknown });
    const json = await inject({ method: 'POST', url: `${w.path}/github`, headers: { 'content-type': 'application/json', 'x-github-event': 'watch' }, payload: body });
    expect(json.statusCode).toBe(400);
    expect(json.json().code).toBe(50109);
    const form = await inject({ method: 'POST', url: `${w.path}/github`, headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-github-event': 'watch' }, payload: `payload=${encodeURIComponent(body)}` });
    expect(form.statusCode).toBe(400);
    expect(form.json().code).toBe(50109);
    expect(await messages(w)).toHaveLength(0);
  });
});

describe('/github reads at most 1 MiB whatever GATEHOUSE_BODY_LIMIT_BYTES allows (issue #36 §4)', () => {
  let big: TestApp;
  beforeAll(async () => {
    big = await createTestApp({ env: { GATEHOUSE_BODY_LIMIT_BYTES: String(8 * 1024 * 1024) } });
  });
  afterAll(async () => big.close());

  it('a 2 MiB delivery is 413 (40005)', async () => {
    const w = await createTestWebhook(big);
    const res = await big.app.inject({ method: 'POST', url: `${w.path}/github`, headers: { 'content-type': 'application/json', 'x-github-event': 'watch' }, payload: JSON.stringify({ ...WATCH, padding: 'x'.repeat(2 * 1024 * 1024) }) });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe(40005);
  });
});
