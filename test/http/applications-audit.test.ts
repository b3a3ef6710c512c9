import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/cli/command.js';
import { appsCommands } from '../../src/cli/commands/apps.js';
import { Permission } from '../../src/core/permissions.js';
import { AuditLogEvent } from '../../src/modules/audit/audit.js';
import type { Application } from '../../src/modules/applications/applications.js';
import { enableBot } from '../../src/modules/applications/bots.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { given } from '../support/given.js';
import { postForm } from '../support/oauth-factory.js';
import { csrfTokenIn, type PageAgent } from '../support/page-agent.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';
import { authorizePath, consentFields, createApp, signedIn } from './authorize.fixtures.js';

/**
 * Issue #37 §2: what developers do to their applications (create, change, reset a secret or a bot
 * token, delete) and what people do with apps (add a bot to a server — Discord's BOT_ADD, 28 —
 * remove it — INTEGRATION_DELETE, 82 —, install one for themselves and remove it) is recorded in
 * the audit log, with who and from where, and never with a secret; a refused change records nothing.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const P = Permission;

async function rowsFor(applicationId: string, action: string) {
  return t.services.db.selectFrom('audit_events').selectAll().where('application_id', '=', applicationId).where('action', '=', action).orderBy('id').execute();
}

/** A row as text, ids (bigint on SQLite) included: what a secret must not be part of. */
function rowText(row: object | undefined): string {
  return JSON.stringify(row, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
}

/** The app id the portal's create form redirected to. */
async function createThroughPortal(agent: PageAgent, name: string): Promise<string> {
  const res = await agent.submit('/developers/applications', '/developers/applications', { name, clientType: 'confidential' });
  expect(res.statusCode).toBe(303);
  return /^\/developers\/applications\/(\d+)/.exec(String(res.headers.location))?.[1] as string;
}

describe('the developer portal records what its owner does', () => {
  it('creating an app, changing its redirect URIs and deleting it each write a row naming the person, the app, the address and the request', async () => {
    const { agent, person } = await signedIn(t);
    const id = await createThroughPortal(agent, 'Audited App');
    const page = `/developers/applications/${id}`;
    const saved = await agent.submit(page, `${page}/oauth2`, { redirectUris: 'https://audited.example/cb' });
    expect(saved.statusCode).toBe(303);
    const deleted = await agent.submit(`${page}/delete`, `${page}/delete`, {});
    expect(deleted.statusCode).toBe(303);

    const rows = await t.services.db.selectFrom('audit_events').selectAll().where('target_id', '=', id).orderBy('id').execute();
    expect(rows.map((r) => r.action)).toEqual(['app.created', 'app.updated', 'app.deleted']);
    for (const row of rows) {
      expect(row).toMatchObject({ actor_kind: 'person', address: '127.0.0.1', request_id: expect.any(String) });
      expect(String(row.actor_id)).toBe(person.id);
      expect(String(row.application_id)).toBe(id);
    }
    expect(String(rows[0]?.subject_user_id)).toBe(person.id);
    expect(JSON.parse(rows[1]?.changes ?? '[]')).toEqual([{ key: 'redirect_uris', old_value: '', new_value: 'https://audited.example/cb' }]);
  });

  it('the bot settings record which switch changed, public or private, old and new', async () => {
    const { agent } = await signedIn(t);
    const id = await createThroughPortal(agent, 'Switches');
    const page = `/developers/applications/${id}`;
    expect((await agent.submit(page, `${page}/bot/settings`, { botRequireCodeGrant: 'on' })).statusCode).toBe(303);
    const [row] = await rowsFor(id, 'app.updated');
    expect(JSON.parse(row?.changes ?? '[]')).toEqual([
      { key: 'bot_public', old_value: true, new_value: false },
      { key: 'bot_require_code_grant', old_value: false, new_value: true },
    ]);
  });

  it('a client secret reset and a bot token reset are recorded, and neither row holds the new secret', async () => {
    const { agent } = await signedIn(t);
    const id = await createThroughPortal(agent, 'Secret Keeper');
    const page = `/developers/applications/${id}`;
    const secretPage = await agent.submitAndFollow(`${page}/reset-secret`, `${page}/reset-secret`, {});
    const secret = /ghcs_[A-Za-z0-9_-]{43}/.exec(secretPage.body)?.[0] as string;
    expect(secret).toBeDefined();
    await agent.submitAndFollow(page, `${page}/bot`, {});
    const tokenPage = await agent.submitAndFollow(`${page}/bot/reset-token`, `${page}/bot/reset-token`, {});
    const token = /ghbt_[A-Za-z0-9_-]{43}/.exec(tokenPage.body)?.[0] as string;
    expect(token).toBeDefined();

    const secretRows = await rowsFor(id, 'client_secret.reset');
    const tokenRows = await rowsFor(id, 'bot_token.reset');
    expect(secretRows).toHaveLength(1);
    expect(tokenRows).toHaveLength(1);
    expect(secretRows[0]?.actor_kind).toBe('person');
    const every = await t.services.db.selectFrom('audit_events').selectAll().where('application_id', '=', id).execute();
    for (const row of every) {
      expect(rowText(row)).not.toContain(secret);
      expect(rowText(row)).not.toContain(token);
    }
  });

  it('someone else resetting the secret of an app that is not theirs gets 404, and nothing is recorded', async () => {
    const owner = await signedIn(t);
    const id = await createThroughPortal(owner.agent, 'Not Yours');
    const stranger = await signedIn(t);
    const csrf = csrfTokenIn((await stranger.agent.get('/developers/applications')).body) as string;
    expect((await stranger.agent.postRaw(`/developers/applications/${id}/reset-secret`, { _csrf: csrf })).statusCode).toBe(404);
    expect(await rowsFor(id, 'client_secret.reset')).toEqual([]);
    // The owner's own reset is.
    await owner.agent.submitAndFollow(`/developers/applications/${id}/reset-secret`, `/developers/applications/${id}/reset-secret`, {});
    expect(await rowsFor(id, 'client_secret.reset')).toHaveLength(1);
  });
});

describe('bot installs are recorded in the server’s audit log', () => {
  let app: Application;
  let botUserId: string;
  let sam: { agent: PageAgent; person: Person };
  let tuck: { agent: PageAgent; person: Person };

  beforeAll(async () => {
    const maker = await signedIn(t);
    ({ app } = await createApp(t, maker.person, { name: 'Audit Bot', redirectUris: ['https://bot.example/cb'] }));
    ({ botUserId } = await enableBot(t.services, personActingOf(maker.person.id), app.id));
    sam = await signedIn(t);
    tuck = await signedIn(t);
  });

  async function install(agent: PageAgent, serverId: string, permissions: bigint) {
    const page = await agent.get(authorizePath({ client_id: app.id, scope: 'bot', permissions: String(permissions), server_id: serverId }));
    const fields = consentFields(page.body);
    return agent.postRaw('/app/oauth2/authorize', { ...fields, server_id: serverId, permission: ['SEND_MESSAGES', 'VIEW_CHANNEL'], decision: 'authorize' }, { 'x-request-id': 'install-1' });
  }

  it('adding a bot through the consent page writes BOT_ADD (28): the installing person, the server, the bot, the scopes and the permissions as a decimal string', async () => {
    const server = await createServer(t.services, personActingOf(sam.person.id), { name: 'Sherwood' });
    const res = await install(sam.agent, server.id, P.SEND_MESSAGES | P.VIEW_CHANNEL);
    expect(res.statusCode).toBe(200);

    const rows = await t.services.db.selectFrom('audit_events').selectAll().where('server_id', '=', server.id).where('action', '=', 'bot.installed').execute();
    expect(rows).toHaveLength(1);
    const row = rows[0];
    expect(Number(row?.action_type)).toBe(AuditLogEvent.BotAdd);
    expect(row).toMatchObject({ actor_kind: 'person', address: '127.0.0.1', request_id: 'install-1', target_id: botUserId });
    expect(String(row?.actor_id)).toBe(sam.person.id);
    expect(String(row?.application_id)).toBe(app.id);
    expect(JSON.parse(row?.options ?? '{}')).toEqual({ scopes: 'bot', permissions: String(P.SEND_MESSAGES | P.VIEW_CHANNEL) });
  });

  it('a member without Manage server is refused (403) and nothing is recorded; the owner’s install then is', async () => {
    const server = await createServer(t.services, personActingOf(sam.person.id), { name: 'Locked' });
    await addMember(t.services, operatorActing(), server.id, tuck.person.id);
    const installers = async () =>
      (await t.services.db.selectFrom('audit_events').select('actor_id').where('server_id', '=', server.id).where('action', '=', 'bot.installed').execute()).map((r) => String(r.actor_id));
    const res = await install(tuck.agent, server.id, P.SEND_MESSAGES);
    expect(res.statusCode).toBe(403);
    expect(await installers()).toEqual([]);
    expect((await install(sam.agent, server.id, P.SEND_MESSAGES)).statusCode).toBe(200);
    expect(await installers()).toEqual([sam.person.id]);
  });

  it('removing the bot from Integrations writes INTEGRATION_DELETE (82) naming the bot', async () => {
    const server = await createServer(t.services, personActingOf(sam.person.id), { name: 'Removal' });
    expect((await install(sam.agent, server.id, P.SEND_MESSAGES)).statusCode).toBe(200);
    const path = `/servers/${server.id}/settings/integrations/apps/${app.id}/remove`;
    expect((await sam.agent.submit(path, path, {})).statusCode).toBe(303);

    const rows = await t.services.db.selectFrom('audit_events').selectAll().where('server_id', '=', server.id).where('action', '=', 'bot.removed').execute();
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]?.action_type)).toBe(AuditLogEvent.IntegrationDelete);
    expect(rows[0]?.target_id).toBe(botUserId);
    expect(String(rows[0]?.actor_id)).toBe(sam.person.id);
  });
});

describe('a bot added at the code exchange is recorded when the code is redeemed', () => {
  it('an app requiring the code grant: no row at consent, BOT_ADD at the exchange with the person who authorized and the token request’s address; a replayed code adds no second row', async () => {
    const maker = await signedIn(t);
    const redirect = 'https://strict.example/cb';
    const { app, clientSecret } = await createApp(t, maker.person, { name: 'Strict Bot', redirectUris: [redirect], botRequireCodeGrant: true, confidential: true });
    const { botUserId } = await enableBot(t.services, personActingOf(maker.person.id), app.id);
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Strict Hall' });
    const page = await owner.agent.get(authorizePath({ client_id: app.id, scope: 'bot', response_type: 'code', redirect_uri: redirect, server_id: server.id, permissions: String(P.SEND_MESSAGES) }));
    const consent = await owner.agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), server_id: server.id, permission: 'SEND_MESSAGES', decision: 'authorize' });
    const code = new URL(String(consent.headers.location)).searchParams.get('code') as string;
    const installed = () => t.services.db.selectFrom('audit_events').selectAll().where('server_id', '=', server.id).where('action', '=', 'bot.installed').execute();
    expect(await installed()).toEqual([]);

    const fields = { grant_type: 'authorization_code', code, redirect_uri: redirect, client_id: app.id, client_secret: clientSecret as string };
    expect((await postForm(t, '/api/oauth2/token', fields, { address: '203.0.113.9', headers: { 'x-request-id': 'exchange-1' } })).statusCode).toBe(200);
    expect((await postForm(t, '/api/oauth2/token', fields)).statusCode).toBe(400);

    const rows = await installed();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor_kind: 'person', address: '203.0.113.9', request_id: 'exchange-1', target_id: botUserId });
    expect(String(rows[0]?.actor_id)).toBe(owner.person.id);
    expect(Number(rows[0]?.action_type)).toBe(AuditLogEvent.BotAdd);
    expect(JSON.parse(rows[0]?.options ?? '{}')).toEqual({ scopes: 'bot', permissions: String(P.SEND_MESSAGES) });
  });
});

describe('user installs are recorded for the person', () => {
  it('installing an app for oneself records user_install.created once, and removing it user_install.deleted', async () => {
    const maker = await signedIn(t);
    const { app } = await createApp(t, maker.person, { name: 'Reminder', redirectUris: ['https://dm.example/cb'] });
    await enableBot(t.services, actingOf({ kind: 'operator' }), app.id);
    const { agent, person } = await signedIn(t);
    const path = authorizePath({ client_id: app.id, scope: 'applications.commands' });
    for (let i = 0; i < 2; i += 1) {
      const page = await agent.get(path);
      expect((await agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), decision: 'authorize' })).statusCode).toBe(200);
    }
    const removal = `/settings/apps/${app.id}/remove`;
    expect((await agent.submit(removal, removal, {})).statusCode).toBe(303);

    const rows = await t.services.db.selectFrom('audit_events').selectAll().where('application_id', '=', app.id).where('subject_user_id', '=', person.id).orderBy('id').execute();
    // Installing again changed nothing, so it recorded nothing.
    expect(rows.map((r) => r.action)).toEqual(['user_install.created', 'user_install.deleted']);
    for (const row of rows) expect([row.actor_kind, String(row.actor_id)]).toEqual(['person', person.id]);
  });
});

describe('a bot overwriting its commands', () => {
  it('announces commands.updated once the commands are stored, with the bot acting, and writes no audit row (not security-relevant); a refused overwrite announces nothing', async () => {
    const bot = await given.bot(t, { name: 'Commander' });
    const heard: Array<{ applicationId: string; serverId: string | null; actor: string }> = [];
    const stop = t.services.bus.on(['commands.updated'], (event, acting) => {
      heard.push({ applicationId: event.applicationId, serverId: event.serverId, actor: acting.actor.kind });
    });
    try {
      const put = (body: unknown) =>
        t.app.inject({ method: 'PUT', url: `/api/v1/applications/${bot.client.app.id}/commands`, headers: { ...bot.headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
      expect((await put([{ name: '', description: 'bad' }])).statusCode).toBe(400);
      expect(heard).toEqual([]);
      expect((await put([{ name: 'ping', description: 'Pings' }])).statusCode).toBe(200);
      expect(heard).toEqual([{ applicationId: bot.client.app.id, serverId: null, actor: 'bot' }]);
    } finally {
      stop();
    }
    expect(await rowsFor(bot.client.app.id, 'commands.updated')).toEqual([]);
  });
});

describe('the CLI records what the operator does', () => {
  it('gatehouse apps create --bot records app.created for the owner and the bot’s app.updated, with the operator as actor and no address, and neither row holds the secret or the token', async () => {
    const owner = await given.person(t);
    const create = appsCommands.find((c) => c.name === 'apps create');
    if (!create) throw new Error('apps create is not registered');
    const { flags } = parseFlags(['--owner', owner.username, '--name', 'Shell App', '--bot'], create.flags);
    const out = (await create.run(t.services, flags)) as Record<string, string>;

    const rows = await t.services.db.selectFrom('audit_events').selectAll().where('application_id', '=', out['id'] as string).orderBy('id').execute();
    expect(rows.map((r) => r.action)).toEqual(['app.created', 'app.updated']);
    for (const row of rows) {
      expect(row).toMatchObject({ actor_kind: 'operator', actor_id: null, address: null, request_id: null });
      expect(rowText(row)).not.toContain(out['client_secret'] as string);
      expect(rowText(row)).not.toContain(out['bot_token'] as string);
    }
    expect(String(rows[0]?.subject_user_id)).toBe(owner.id);
    expect(JSON.parse(rows[1]?.changes ?? '[]')).toEqual([{ key: 'bot_user_id', old_value: null, new_value: out['bot_user_id'] }]);
  });
});
