import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliUsageError } from '../../src/cli/command.js';
import { Permission } from '../../src/core/permissions.js';
import { person as personActor } from '../../src/core/actor.js';
import { disableApp } from '../../src/modules/applications/apps-admin.service.js';
import { writeServerInstall } from '../../src/modules/applications/installs.service.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import { findMember } from '../../src/modules/directory/members.repository.js';
import { createWebhookInTransaction } from '../../src/modules/webhooks/webhooks.service.js';
import { actingOf, personActingOf } from '../support/acting.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCommand } from '../support/directory-fixtures.js';
import { given, type TestBot } from '../support/given.js';
import { codeExchangeFields, getWithBearer, obtainTokens, postForm } from '../support/oauth-factory.js';
import { markApplicationDisabled } from '../../src/modules/applications/apps-admin.repository.js';
import { authorizePath } from './authorize.fixtures.js';
import { insertAppKeysIfMissing, listDeliveries, updateEventWebhooks } from '../../src/modules/app-events/app-events.repository.js';
import { EventWebhooksStatus } from '../../src/modules/app-events/app-events.js';
import { DROPPED_DISABLED } from '../../src/modules/app-events/disabled-apps.service.js';

/**
 * Issue #39 §Apps: `gatehouse apps list|show|disable|enable|delete`. A disabled app's tokens and
 * bot token stop working at once, its consent screen says it is unavailable, installs remain and
 * the bot is inert; deleting removes installs, tokens and the webhooks it created through
 * webhook.incoming. Runs on PostgreSQL too with TEST_DATABASE_URL.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** An app with a bot installed in a new server, a person's working tokens, and a webhook.incoming webhook. */
async function appInUse(): Promise<{ bot: TestBot; channel: Channel; serverId: string; tokens: { access_token: string; refresh_token: string }; incomingId: string; botWebhookId: string }> {
  const owner = await given.person(t);
  const bot = await given.bot(t, { owner, name: 'Noisy Bot' });
  const server = await given.server(t, { owner });
  const channel = server.channels[0] as Channel & { serverId: string };
  await t.services.db.transaction().execute((trx) =>
    writeServerInstall(t.services, personActingOf(owner.id), trx, { application: { id: bot.client.app.id, name: 'Noisy Bot', botUserId: bot.botUserId }, serverId: server.id, installerId: owner.id, granted: Permission.SEND_MESSAGES | Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL, commands: false }),
  );
  const user = await given.person(t);
  const tokens = await obtainTokens(t, bot.client, user, ['identify']);
  // A webhook the app's webhook.incoming authorization created: the person is its creator, the app its application.
  const incoming = await t.services.db.transaction().execute((trx) => createWebhookInTransaction(t.services, personActingOf(owner.id), trx, channel, { userId: owner.id, applicationId: bot.client.app.id }, { name: 'Noisy Bot', avatarUrl: null }));
  // One its bot created through the API.
  const viaApi = await t.app.inject({ method: 'POST', url: `/api/v1/channels/${channel.id}/webhooks`, headers: { ...bot.headers, 'content-type': 'application/json' }, payload: { name: 'Bot hook' } });
  expect(viaApi.statusCode).toBe(201);
  return { bot, channel, serverId: server.id, tokens, incomingId: incoming?.webhook.id as string, botWebhookId: (viaApi.json() as { id: string }).id };
}

const refresh = (bot: TestBot, refreshToken: string) => postForm(t, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: bot.client.clientId, client_secret: bot.client.clientSecret as string });
const botMe = (bot: TestBot) => t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: bot.headers });

describe('gatehouse apps disable / enable', () => {
  it('without --yes off a terminal it refuses, says what it would revoke, and changes nothing', async () => {
    const { bot, tokens } = await appInUse();
    const refused = await runCommand(t, 'apps disable', ['--app', bot.client.app.id]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CliUsageError);
    expect((refused as Error).message).toContain('revokes 1 authorization of 1 person');
    expect((refused as Error).message).toContain('--yes');
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);
    expect((await botMe(bot)).statusCode).toBe(200);
  });

  it('revokes every token at once (refresh → invalid_grant, bearer → 401), the bot token → 401, installs stay; enabling restores the bot, not the tokens', async () => {
    const { bot, tokens, serverId } = await appInUse();
    const out = await runCommand(t, 'apps disable', ['--app', bot.client.app.id, '--reason', 'spam', '--yes']);
    expect(out).toMatchObject({ id: bot.client.app.id, disabled: true, disabled_reason: 'spam', changed: true, revoked_grants: 1 });

    const refused = await refresh(bot, tokens.refresh_token);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(401);
    expect((await botMe(bot)).statusCode).toBe(401);
    expect(await findMember(t.services.db, serverId, bot.botUserId)).toBeDefined();

    const shown = await runCommand(t, 'apps show', ['--app', bot.client.app.id]);
    expect(shown).toMatchObject({ disabled: true, disabled_reason: 'spam', grants: 0, server_installs: 1 });
    const again = await runCommand(t, 'apps disable', ['--app', bot.client.app.id]);
    expect(again).toMatchObject({ changed: false });

    const enabled = await runCommand(t, 'apps enable', ['--app', bot.client.app.id]);
    expect(enabled).toMatchObject({ disabled: false, changed: true });
    expect((await botMe(bot)).statusCode).toBe(200);
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(401);
    expect((await refresh(bot, tokens.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });

    const rows = await t.services.db.selectFrom('audit_events').selectAll().where('application_id', '=', bot.client.app.id).where('action', 'in', ['app.disabled', 'app.enabled']).orderBy('id').execute();
    expect(rows.map((r) => [r.action, r.actor_kind, r.reason])).toEqual([
      ['app.disabled', 'operator', 'spam'],
      ['app.enabled', 'operator', null],
    ]);
  });

  it("a disabled app's consent screen says it is unavailable, as a page and never a redirect (RFC 6749 §4.1.2.1)", async () => {
    const client = await given.confidentialApp(t, { name: 'Phishy' });
    await runCommand(t, 'apps disable', ['--app', client.app.id, '--yes']);
    const { agent } = await given.signedIn(t);
    const page = await agent.get(authorizePath({ client_id: client.clientId, response_type: 'code', redirect_uri: client.redirectUri, scope: 'identify', state: 's' }));
    expect(page.statusCode).toBe(403);
    expect(page.headers['location']).toBeUndefined();
    expect(page.body).toContain('Phishy is unavailable');
  });

  it('a code that raced the disabling is refused at the token endpoint with invalid_grant', async () => {
    const client = await given.confidentialApp(t);
    const issued = await given.code(t, { client, person: await given.person(t), pkce: false });
    // The app row marked disabled without the revocation disableApp does with it: what a code exchanged at that moment meets.
    await markApplicationDisabled(t.services.db, client.app.id, t.clock.now(), null);
    const res = await postForm(t, '/api/oauth2/token', codeExchangeFields(client, issued));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_grant', error_description: 'this application is disabled by the operator of this service' });
  });

  it("a disabled app's credentials are invalid_client at introspection (RFC 7662) and revocation (RFC 7009), and the revocation changes nothing", async () => {
    const client = await given.confidentialApp(t);
    const tokens = await obtainTokens(t, client, await given.person(t), ['identify']);
    const credentials = { client_id: client.clientId, client_secret: client.clientSecret as string };
    const introspect = () => postForm(t, '/api/oauth2/token/introspect', { token: tokens.access_token, ...credentials });
    expect((await introspect()).json()).toMatchObject({ active: true });
    // The row marked disabled without disableApp's revocation, so a refused revocation shows that it revoked nothing.
    await markApplicationDisabled(t.services.db, client.app.id, t.clock.now(), null);

    const described = await introspect();
    expect(described.statusCode).toBe(401);
    expect(described.json()).toEqual({ error: 'invalid_client', error_description: 'this application is disabled by the operator of this service' });
    const revoked = await postForm(t, '/api/oauth2/token/revoke', { token: tokens.access_token, ...credentials });
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json()).toMatchObject({ error: 'invalid_client' });
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);
  });

  it('a disabled app gets no app events: the queued ones are dropped (its delivery log says why) and none is queued while it is disabled', async () => {
    const owner = await given.person(t);
    const bot = await given.bot(t, { owner, name: 'Listening Bot' });
    const appId = bot.client.app.id;
    await insertAppKeysIfMissing(t.services.db, { applicationId: appId, publicKey: 'unused', sealedPrivateKey: 'unused', now: t.clock.now() });
    await updateEventWebhooks(t.services.db, appId, { url: 'https://events.example.test/gatehouse', status: EventWebhooksStatus.ENABLED, types: ['APPLICATION_AUTHORIZED'], disabledReason: null }, t.clock.now());
    const queued = async () => (await t.services.db.selectFrom('app_event_outbox').select('event_type').where('application_id', '=', appId).execute()).length;
    const install = async () => {
      const server = await given.server(t, { owner });
      await t.services.db.transaction().execute((trx) =>
        writeServerInstall(t.services, personActingOf(owner.id), trx, { application: { id: appId, name: 'Listening Bot', botUserId: bot.botUserId }, serverId: server.id, installerId: owner.id, granted: Permission.SEND_MESSAGES, commands: false }),
      );
    };
    await install();
    expect(await queued()).toBe(1);

    await runCommand(t, 'apps disable', ['--app', appId, '--yes']);
    expect(await queued()).toBe(0);
    expect(await listDeliveries(t.services.db, appId, 10)).toEqual([expect.objectContaining({ kind: 'event', eventType: 'APPLICATION_AUTHORIZED', outcome: 'dropped', error: DROPPED_DISABLED })]);

    // A bot install written while it is disabled would be APPLICATION_AUTHORIZED for an enabled app.
    await install();
    expect(await queued()).toBe(0);
  });

  it('only the operator disables: a person who is not an instance administrator gets 403 50013', async () => {
    const client = await given.confidentialApp(t);
    await expect(disableApp(t.services, actingOf(personActor(client.app.ownerId)), client.app.id)).rejects.toMatchObject({ status: 403, code: 50013 });
  });
});

describe('gatehouse apps delete', () => {
  it('says what it removes, then removes the bot from its servers, the tokens and the webhook.incoming webhooks; the webhook its bot created stays', async () => {
    const { bot, tokens, serverId, incomingId, botWebhookId } = await appInUse();
    const refused = await runCommand(t, 'apps delete', ['--app', bot.client.app.id]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CliUsageError);
    expect((refused as Error).message).toContain('its bot from 1 server');
    expect((refused as Error).message).toContain(`1 webhook created through webhook.incoming: Noisy Bot (${incomingId}`);

    const out = await runCommand(t, 'apps delete', ['--app', bot.client.app.id, '--yes']);
    expect(out).toMatchObject({ id: bot.client.app.id, deleted: true, removed: { grants: 1, server_installs: 1, incoming_webhooks: [{ id: incomingId, name: 'Noisy Bot' }] } });
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(401);
    expect(await findMember(t.services.db, serverId, bot.botUserId)).toBeUndefined();
    expect(await t.services.db.selectFrom('webhooks').select('id').where('id', '=', incomingId).executeTakeFirst()).toBeUndefined();
    expect(await t.services.db.selectFrom('webhooks').select('id').where('id', '=', botWebhookId).executeTakeFirst()).toBeDefined();
    const actions = (await t.services.db.selectFrom('audit_events').select('action').where('application_id', '=', bot.client.app.id).where('actor_kind', '=', 'operator').execute()).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(['bot.removed', 'app.deleted']));
  });

  it('an unknown or malformed --app is a clear error naming the flag', async () => {
    for (const id of ['123456789012345678', 'nope']) {
      await expect(runCommand(t, 'apps delete', ['--app', id, '--yes'])).rejects.toThrow(`--app: no application has the id "${id}"`);
      await expect(runCommand(t, 'apps disable', ['--app', id, '--yes'])).rejects.toThrow('--app: no application');
    }
  });
});

describe('gatehouse apps list', () => {
  it('pages oldest first with next_after, filters by --owner and --disabled, and refuses an unknown owner', async () => {
    const owner = await given.person(t);
    const first = await given.confidentialApp(t, { owner, name: 'First' });
    const second = await given.confidentialApp(t, { owner, name: 'Second' });
    const third = await given.publicApp(t, { owner, name: 'Third' });
    await runCommand(t, 'apps disable', ['--app', second.app.id, '--yes']);

    const page1 = (await runCommand(t, 'apps list', ['--owner', owner.username, '--limit', '2'])) as { apps: Array<{ id: string; owner_username: string }>; next_after: string | null; count: number };
    expect(page1.apps.map((a) => a.id)).toEqual([first.app.id, second.app.id]);
    expect(page1.apps[0]?.owner_username).toBe(owner.username);
    expect(page1.next_after).toBe(second.app.id);
    const page2 = (await runCommand(t, 'apps list', ['--owner', owner.username, '--limit', '2', '--after', page1.next_after as string])) as typeof page1;
    expect(page2.apps.map((a) => a.id)).toEqual([third.app.id]);
    expect(page2.next_after).toBeNull();
    const disabled = (await runCommand(t, 'apps list', ['--owner', owner.username, '--disabled'])) as typeof page1;
    expect(disabled.apps.map((a) => a.id)).toEqual([second.app.id]);

    await expect(runCommand(t, 'apps list', ['--owner', 'nobody-by-this-name'])).rejects.toMatchObject({ code: 10013 });
    await expect(runCommand(t, 'apps list', ['--limit', '0'])).rejects.toBeInstanceOf(CliUsageError);
  });
});
