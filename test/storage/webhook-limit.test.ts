import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { deleteWebhook, insertWebhookCounted } from '../../src/modules/webhooks/webhooks.repository.js';
import type { Webhook } from '../../src/modules/webhooks/webhooks.js';
import { connectDatabase, type DatabaseHandle } from '../../src/storage/connect.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { testDialect } from '../support/database.js';
import { createPerson } from '../support/oauth-factory.js';
import { createBot } from '../http/dms.fixtures.js';
import { operatorActing, personActingOf } from '../support/acting.js';

/**
 * SPEC §8: at most 10 webhooks per channel, "and exactly 10 exist even when many creations race"
 * (issue #5). The conditional UPDATE on channels.webhook_count decides; these tests race it on
 * both databases. On PostgreSQL a second connection pool on the same schema plays a second
 * instance; SQLite serialises writers of one process through its single connection.
 */
let t: TestApp;
let second: DatabaseHandle | undefined;
beforeAll(async () => {
  t = await createTestApp();
  if (testDialect === 'postgres' && t.database.schema) second = connectDatabase(t.database.url, { schema: t.database.schema, poolSize: 5 });
});
afterAll(async () => {
  await second?.close();
  await t.close();
});

const RACERS = 50;

async function emptyChannel(): Promise<{ serverId: string; channelId: string; ownerId: string }> {
  const owner = await createPerson(t);
  const server = await createServer(t.services, personActingOf(owner.id), { name: 'Race track' });
  return { serverId: server.id, channelId: server.channels[0]?.id as string, ownerId: owner.id };
}

async function stored(channelId: string): Promise<{ rows: number; counter: number }> {
  const rows = await t.services.db.selectFrom('webhooks').select('id').where('channel_id', '=', channelId).execute();
  const channel = await t.services.db.selectFrom('channels').select('webhook_count').where('id', '=', channelId).executeTakeFirstOrThrow();
  return { rows: rows.length, counter: Number(channel.webhook_count) };
}

function webhookRow(scope: { serverId: string; channelId: string; ownerId: string }, i: number): Webhook {
  return {
    id: t.services.ids.next(),
    tokenHash: `hash-${i}`,
    serverId: scope.serverId,
    channelId: scope.channelId,
    name: `Racer ${i}`,
    avatarUrl: null,
    applicationId: null,
    creatorId: scope.ownerId,
    createdAt: t.clock.now(),
    githubSecretSealed: null,
  };
}

describe(`racing webhook creations (${testDialect})`, () => {
  it(`${RACERS} concurrent inserts into an empty channel: exactly 10 succeed and exactly 10 rows exist`, async () => {
    const scope = await emptyChannel();
    const dbs = second ? [t.services.db, second.db] : [t.services.db];
    const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => insertWebhookCounted(dbs[i % dbs.length] ?? t.services.db, webhookRow(scope, i))));
    expect(results.filter(Boolean)).toHaveLength(10);
    expect(await stored(scope.channelId)).toEqual({ rows: 10, counter: 10 });
  });

  it(`${RACERS} concurrent POST /api/v1/channels/{id}/webhooks: exactly 10 answers are 201, the rest 30007`, async () => {
    const scope = await emptyChannel();
    const bot = await createBot(t, { name: 'Racer' });
    const role = await createRole(t.services, operatorActing(), scope.serverId, { name: 'Hooks', permissions: Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL });
    await addMember(t.services, operatorActing(), scope.serverId, bot.botUserId, [role.id]);
    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        t.app.inject({
          method: 'POST',
          url: `/api/v1/channels/${scope.channelId}/webhooks`,
          headers: { ...bot.headers, 'content-type': 'application/json' },
          payload: JSON.stringify({ name: `Racer ${i}` }),
        }),
      ),
    );
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 400)).toHaveLength(RACERS - 10);
    for (const a of answers.filter((x) => x.statusCode === 400)) expect(a.json()).toMatchObject({ code: 30007 });
    expect(await stored(scope.channelId)).toEqual({ rows: 10, counter: 10 });
  });

  it('racing deletions of the same webhook free its slot once', async () => {
    const scope = await emptyChannel();
    const row = webhookRow(scope, 0);
    expect(await insertWebhookCounted(t.services.db, row)).toBe(true);
    expect(await insertWebhookCounted(t.services.db, webhookRow(scope, 1))).toBe(true);
    const dbs = second ? [t.services.db, second.db] : [t.services.db];
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => deleteWebhook(dbs[i % dbs.length] ?? t.services.db, row.id)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await stored(scope.channelId)).toEqual({ rows: 1, counter: 1 });
  });

  it('a channel that does not exist takes no webhook', async () => {
    const scope = await emptyChannel();
    expect(await insertWebhookCounted(t.services.db, { ...webhookRow(scope, 0), channelId: '123456789012345678' })).toBe(false);
  });
});
