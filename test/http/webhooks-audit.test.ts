import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import { addMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole, updateRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { AuditLogEvent } from '../../src/modules/audit/audit.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { given, pkcePair } from '../support/given.js';
import { authorizePath, consentFields } from './authorize.fixtures.js';
import { createPerson, postForm } from '../support/oauth-factory.js';
import { csrfTokenIn } from '../support/page-agent.js';
import { operatorActing, personActingOf } from '../support/acting.js';
import { createBot, type TestBot } from './dms.fixtures.js';

/**
 * Issue #37 §2: managing a webhook — by a bot through the API, or by a person on the Integrations
 * pages — writes Discord's WEBHOOK_CREATE (50), WEBHOOK_UPDATE (51) and WEBHOOK_DELETE (52) audit
 * rows, with who, from where, in which request and why; a refused change writes none.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const MANAGE = Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL;

/** A server whose @everyone can only view, with the bot in it holding `role` through a role (nothing more when undefined). */
async function serverWithBot(role?: bigint): Promise<{ bot: TestBot; serverId: string; channelId: string; channel: Channel }> {
  const owner = await createPerson(t);
  const server = await createServer(t.services, personActingOf(owner.id), { name: 'Workshop' });
  await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: Permission.VIEW_CHANNEL });
  const bot = await createBot(t, { name: 'Deployer' });
  await addMember(t.services, operatorActing(), server.id, bot.botUserId);
  if (role !== undefined) {
    const r = await createRole(t.services, operatorActing(), server.id, { name: 'Hooks', permissions: role });
    await setMemberRoles(t.services, operatorActing(), server.id, bot.botUserId, [r.id]);
  }
  const channel = server.channels[0] as Channel;
  return { bot, serverId: server.id, channelId: channel.id, channel };
}

function call(bot: TestBot, method: 'POST' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string>, body?: unknown): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method,
    url,
    headers: { ...bot.headers, ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}

/** The audit rows about `targetId`, oldest first. */
async function auditRowsOf(targetId: string) {
  return t.services.db.selectFrom('audit_events').selectAll().where('target_id', '=', targetId).orderBy('id').execute();
}

/** A row as text, ids (bigint on SQLite) included: what a secret must not be part of. */
function rowText(row: object | undefined): string {
  return JSON.stringify(row, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
}

async function auditRowsIn(serverId: string, action: string) {
  return t.services.db.selectFrom('audit_events').selectAll().where('server_id', '=', serverId).where('action', '=', action).execute();
}

describe('a bot managing webhooks through the API is recorded in the server’s audit log', () => {
  it('creating a webhook with X-Audit-Log-Reason writes one WEBHOOK_CREATE row: the bot, the reason decoded, the server, the webhook, the address and the request id', async () => {
    const { bot, serverId, channelId } = await serverWithBot(MANAGE);
    const res = await call(bot, 'POST', `/api/v1/channels/${channelId}/webhooks`, { 'x-audit-log-reason': encodeURIComponent('Deploys post here — ça marche'), 'x-request-id': 'create-hook-1' }, { name: 'Deploys' });
    expect(res.statusCode).toBe(201);
    const webhook = res.json() as { id: string; token: string };

    const rows = await auditRowsOf(webhook.id);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect({ ...row, server_id: String(row.server_id), actor_id: String(row.actor_id), application_id: String(row.application_id), action_type: Number(row.action_type) }).toMatchObject({
      action: 'webhook.created',
      action_type: AuditLogEvent.WebhookCreate,
      server_id: serverId,
      actor_kind: 'bot',
      actor_id: bot.botUserId,
      application_id: bot.client.app.id,
      target_id: webhook.id,
      address: '127.0.0.1',
      request_id: 'create-hook-1',
      reason: 'Deploys post here — ça marche',
    });
    expect(JSON.parse(row.changes ?? '[]')).toEqual(expect.arrayContaining([expect.objectContaining({ key: 'name', new_value: 'Deploys' })]));
    // The token is shown once in the answer and never written to the log.
    expect(rowText(row)).not.toContain(webhook.token);
  });

  it('regenerating the token, renaming and deleting each write their row: WEBHOOK_UPDATE, WEBHOOK_UPDATE with the old and new name, WEBHOOK_DELETE', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    const created = (await call(bot, 'POST', `/api/v1/channels/${channelId}/webhooks`, {}, { name: 'Builds' })).json() as { id: string };

    const regenerated = await call(bot, 'POST', `/api/v1/webhooks/${created.id}/token`, { 'x-request-id': 'regen-1' });
    expect(regenerated.statusCode).toBe(200);
    const newToken = (regenerated.json() as { token: string }).token;
    const renamed = await call(bot, 'PATCH', `/api/v1/webhooks/${created.id}`, { 'x-audit-log-reason': 'clearer name' }, { name: 'Nightly builds' });
    expect(renamed.statusCode).toBe(200);
    const deleted = await call(bot, 'DELETE', `/api/v1/webhooks/${created.id}`, {});
    expect(deleted.statusCode).toBe(204);

    const rows = await auditRowsOf(created.id);
    expect(rows.map((r) => [r.action, Number(r.action_type)])).toEqual([
      ['webhook.created', AuditLogEvent.WebhookCreate],
      ['webhook.token_regenerated', AuditLogEvent.WebhookUpdate],
      ['webhook.updated', AuditLogEvent.WebhookUpdate],
      ['webhook.deleted', AuditLogEvent.WebhookDelete],
    ]);
    const [, regen, rename, removal] = rows;
    expect(regen?.request_id).toBe('regen-1');
    expect(rowText(regen)).not.toContain(newToken);
    expect(rename?.reason).toBe('clearer name');
    expect(JSON.parse(rename?.changes ?? '[]')).toEqual([{ key: 'name', old_value: 'Builds', new_value: 'Nightly builds' }]);
    expect(JSON.parse(removal?.changes ?? '[]')).toEqual(expect.arrayContaining([{ key: 'name', old_value: 'Nightly builds' }]));
    for (const row of rows) expect([row.actor_kind, String(row.actor_id)]).toEqual(['bot', bot.botUserId]);
  });

  it('a rename that changes nothing writes no row', async () => {
    const { bot, channelId } = await serverWithBot(MANAGE);
    const created = (await call(bot, 'POST', `/api/v1/channels/${channelId}/webhooks`, {}, { name: 'Same' })).json() as { id: string };
    expect((await call(bot, 'PATCH', `/api/v1/webhooks/${created.id}`, {}, { name: 'Same' })).statusCode).toBe(200);
    expect((await auditRowsOf(created.id)).map((r) => r.action)).toEqual(['webhook.created']);
  });

  it('a refused change writes nothing: creating without Manage webhooks (403), a bad name (400), managing another’s webhook without the permission (403)', async () => {
    const weak = await serverWithBot();
    const refused = await call(weak.bot, 'POST', `/api/v1/channels/${weak.channelId}/webhooks`, { 'x-audit-log-reason': 'should not appear' }, { name: 'Nope' });
    expect(refused.statusCode).toBe(403);
    expect(await auditRowsIn(weak.serverId, 'webhook.created')).toEqual([]);

    const strong = await serverWithBot(MANAGE);
    const invalid = await call(strong.bot, 'POST', `/api/v1/channels/${strong.channelId}/webhooks`, {}, { name: '' });
    expect(invalid.statusCode).toBe(400);
    expect(await auditRowsIn(strong.serverId, 'webhook.created')).toEqual([]);

    // A webhook made by the owner in the weak bot's server: the bot may not touch it.
    const hook = await given.webhook(t, { channel: weak.channel });
    expect((await call(weak.bot, 'PATCH', `/api/v1/webhooks/${hook.webhook.id}`, {}, { name: 'Taken' })).statusCode).toBe(403);
    expect((await call(weak.bot, 'POST', `/api/v1/webhooks/${hook.webhook.id}/token`, {})).statusCode).toBe(403);
    expect((await call(weak.bot, 'DELETE', `/api/v1/webhooks/${hook.webhook.id}`, {})).statusCode).toBe(403);
    expect((await auditRowsOf(hook.webhook.id)).map((r) => r.action)).toEqual(['webhook.created']);
  });
});

describe('a person managing webhooks on the Integrations page is recorded', () => {
  it('creating a webhook from Server settings → Integrations writes WEBHOOK_CREATE with the person as actor', async () => {
    const { agent, person } = await given.signedIn(t);
    const server = await createServer(t.services, personActingOf(person.id), { name: 'Pages' });
    const channelId = server.channels[0]?.id as string;
    const page = `/servers/${server.id}/settings/integrations`;
    const posted = await agent.submit(page, `${page}/webhooks`, { name: 'From the page', avatarUrl: '', channelId });
    expect(posted.statusCode).toBe(303);

    const rows = await auditRowsIn(server.id, 'webhook.created');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor_kind: 'person', address: '127.0.0.1' });
    expect(String(rows[0]?.actor_id)).toBe(person.id);
    expect(Number(rows[0]?.action_type)).toBe(AuditLogEvent.WebhookCreate);
    expect(rows[0]?.request_id).toEqual(expect.any(String));
  });

  it('a member without Manage webhooks is refused (403) and nothing is recorded; the owner’s creation then is', async () => {
    const owner = await given.signedIn(t);
    const member = await given.signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Locked' });
    await addMember(t.services, operatorActing(), server.id, member.person.id);
    const page = `/servers/${server.id}/settings/integrations`;
    const csrf = csrfTokenIn((await member.agent.get('/')).body) as string;
    const res = await member.agent.postRaw(`${page}/webhooks`, { _csrf: csrf, name: 'Sneaky', channelId: server.channels[0]?.id as string });
    expect(res.statusCode).toBe(403);
    expect(await auditRowsIn(server.id, 'webhook.created')).toEqual([]);

    const allowed = await owner.agent.submit(page, `${page}/webhooks`, { name: 'Allowed', avatarUrl: '', channelId: server.channels[0]?.id as string });
    expect(allowed.statusCode).toBe(303);
    const rows = await auditRowsIn(server.id, 'webhook.created');
    expect(rows.map((r) => String(r.actor_id))).toEqual([owner.person.id]);
  });
});

describe('a webhook made by a webhook.incoming authorization is recorded when its code is redeemed', () => {
  it('WEBHOOK_CREATE names the person who authorized and the application, from the token request; nothing is recorded before the exchange', async () => {
    const redirect = 'https://feed.example/cb';
    const maker = await given.signedIn(t);
    const app = await given.publicApp(t, { owner: maker.person, name: 'Status Feed', redirectUris: [redirect] });
    const { agent, person } = await given.signedIn(t);
    const server = await createServer(t.services, personActingOf(person.id), { name: 'Ops' });
    const channelId = server.channels[0]?.id as string;
    const pkce = pkcePair();
    const page = await agent.get(authorizePath({ response_type: 'code', client_id: app.app.id, redirect_uri: redirect, scope: 'webhook.incoming', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    const consent = await agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), channel_id: channelId, decision: 'authorize' });
    const code = new URL(String(consent.headers.location)).searchParams.get('code') as string;
    expect(await auditRowsIn(server.id, 'webhook.created')).toEqual([]);

    const exchanged = await postForm(t, '/api/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: redirect, client_id: app.app.id, code_verifier: pkce.verifier }, { address: '198.51.100.7' });
    expect(exchanged.statusCode).toBe(200);
    const webhook = (exchanged.json() as { webhook: { id: string; token: string } }).webhook;

    const rows = await auditRowsOf(webhook.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ action: 'webhook.created', actor_kind: 'person', address: '198.51.100.7' });
    expect(String(rows[0]?.actor_id)).toBe(person.id);
    expect(String(rows[0]?.server_id)).toBe(server.id);
    expect(rowText(rows[0])).not.toContain(webhook.token);
  });
});
