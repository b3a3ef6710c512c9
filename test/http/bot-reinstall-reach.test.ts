import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/core/actor.js';
import { Permission } from '../../src/core/permissions.js';
import type { Application } from '../../src/modules/applications/applications.js';
import { enableBot } from '../../src/modules/applications/bots.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { postForm } from '../support/oauth-factory.js';
import { csrfTokenIn, type PageAgent } from '../support/page-agent.js';
import { authorizePath, consentFields, createApp, location, signedIn } from './authorize.fixtures.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';

const P = Permission;
const REDIRECT = 'https://bot.example/callback';

/**
 * docs/permissions.md rule 3 ("roles within reach") on both paths that change an installed bot's
 * managed role without Manage roles (issue #36 §5): installing it again, and removing it from
 * Server settings → Integrations. The moderator holds Manage server but neither Manage roles nor
 * Ban members; an Administrator installed the bot with Ban members.
 */
let t: TestApp;
let app: Application;
let owner: { agent: PageAgent; person: Person };
let moderator: { agent: PageAgent; person: Person };
let admin: { agent: PageAgent; person: Person };

beforeAll(async () => {
  t = await createTestApp();
  const maker = await signedIn(t, 'reachmaker');
  ({ app } = await createApp(t, maker.person, { name: 'Reach Bot', redirectUris: [REDIRECT] }));
  await enableBot(t.services, actingOf(OPERATOR), app.id);
  owner = await signedIn(t, 'reachowner');
  moderator = await signedIn(t, 'reachmod');
  admin = await signedIn(t, 'reachadmin');
});
afterAll(async () => t.close());

async function serverWithBot(): Promise<string> {
  const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Reach' });
  const mods = await createRole(t.services, operatorActing(), server.id, { name: 'Moderators', permissions: P.MANAGE_SERVER | P.KICK_MEMBERS | P.VIEW_CHANNEL | P.SEND_MESSAGES });
  const admins = await createRole(t.services, operatorActing(), server.id, { name: 'Admins', permissions: P.ADMINISTRATOR });
  await addMember(t.services, operatorActing(), server.id, moderator.person.id, [mods.id]);
  await addMember(t.services, operatorActing(), server.id, admin.person.id, [admins.id]);
  const res = await install(admin.agent, installPath({ server_id: server.id, permissions: String(P.BAN_MEMBERS | P.VIEW_CHANNEL) }));
  expect(res.statusCode).toBe(200);
  expect(await managedRole(server.id)).toBe(P.BAN_MEMBERS | P.VIEW_CHANNEL);
  return server.id;
}

function installPath(params: Record<string, string | undefined>, forApp: Application = app): string {
  return authorizePath({ client_id: forApp.id, scope: 'bot', ...params });
}

/** Opens the consent screen and presses Authorize with every grantable box ticked. */
async function install(agent: PageAgent, path: string): Promise<LightMyRequestResponse> {
  const page = await agent.get(path);
  expect(page.statusCode).toBe(200);
  const ticked = [...page.body.matchAll(/name="permission" value="([A-Z_]+)"(?: checked aria-describedby|>)/g)].map((m) => m[1] as string);
  return agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), permission: ticked, decision: 'authorize' });
}

async function managedRole(serverId: string, appId = app.id): Promise<bigint | undefined> {
  const row = await t.services.db.selectFrom('roles').select('permissions').where('server_id', '=', serverId).where('managed_application_id', '=', appId).executeTakeFirst();
  return row ? BigInt(row.permissions) : undefined;
}

async function installRow(serverId: string, appId = app.id) {
  return t.services.db.selectFrom('server_installs').selectAll().where('server_id', '=', serverId).where('application_id', '=', appId).executeTakeFirst();
}

describe('an installed bot holding a permission the moderator lacks', () => {
  it('cannot be installed again by them, with fewer permissions or the same: 403 naming the permission, the role and install record unchanged', async () => {
    const serverId = await serverWithBot();
    const before = await installRow(serverId);
    for (const permissions of [String(P.VIEW_CHANNEL), String(P.BAN_MEMBERS | P.VIEW_CHANNEL)]) {
      const res = await install(moderator.agent, installPath({ server_id: serverId, permissions }));
      expect(res.statusCode, permissions).toBe(403);
      expect(res.body).toContain('its role holds permissions you do not have (Ban members)');
      expect(res.body).toContain('Nothing was changed.');
      expect(await managedRole(serverId)).toBe(P.BAN_MEMBERS | P.VIEW_CHANNEL);
      expect(await installRow(serverId)).toEqual(before);
    }
  });

  it('cannot be removed by them from Integrations: 403, the bot stays', async () => {
    const serverId = await serverWithBot();
    const path = `/servers/${serverId}/settings/integrations/apps/${app.id}/remove`;
    const res = await moderator.agent.postRaw(path, { _csrf: csrfTokenIn((await moderator.agent.get('/')).body) as string });
    expect(res.statusCode).toBe(403);
    expect(await managedRole(serverId)).toBe(P.BAN_MEMBERS | P.VIEW_CHANNEL);
    expect(await installRow(serverId)).toBeDefined();
  });

  it('someone holding every permission of its role (the Administrator) still installs it again with fewer', async () => {
    const serverId = await serverWithBot();
    const res = await install(admin.agent, installPath({ server_id: serverId, permissions: String(P.VIEW_CHANNEL) }));
    expect(res.statusCode).toBe(200);
    expect(await managedRole(serverId)).toBe(P.VIEW_CHANNEL);
    // Now within the moderator's reach: they may install it again.
    expect((await install(moderator.agent, installPath({ server_id: serverId, permissions: String(P.VIEW_CHANNEL | P.SEND_MESSAGES) }))).statusCode).toBe(200);
    expect(await managedRole(serverId)).toBe(P.VIEW_CHANNEL | P.SEND_MESSAGES);
  });

  it('an app that requires the code grant: a code the moderator obtained before the bot got Ban members does not rewrite its role at the exchange', async () => {
    const { app: strict, clientSecret } = await createApp(t, owner.person, { name: 'Strict Reach Bot', redirectUris: [REDIRECT], botRequireCodeGrant: true, confidential: true });
    await enableBot(t.services, actingOf(OPERATOR), strict.id);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Reach exchange' });
    const mods = await createRole(t.services, operatorActing(), server.id, { name: 'Moderators', permissions: P.MANAGE_SERVER | P.VIEW_CHANNEL });
    await addMember(t.services, operatorActing(), server.id, moderator.person.id, [mods.id]);
    const exchange = (code: string) => postForm(t, '/api/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: strict.id, client_secret: clientSecret as string });
    const codeFor = async (agent: PageAgent, permissions: bigint) =>
      location(await install(agent, installPath({ server_id: server.id, response_type: 'code', redirect_uri: REDIRECT, permissions: String(permissions) }, strict))).searchParams.get('code') as string;

    const moderatorsCode = await codeFor(moderator.agent, P.VIEW_CHANNEL);
    // The owner installs it meanwhile with Ban members.
    expect((await exchange(await codeFor(owner.agent, P.BAN_MEMBERS | P.VIEW_CHANNEL))).statusCode).toBe(200);
    expect(await managedRole(server.id, strict.id)).toBe(P.BAN_MEMBERS | P.VIEW_CHANNEL);

    const res = await exchange(moderatorsCode);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await managedRole(server.id, strict.id)).toBe(P.BAN_MEMBERS | P.VIEW_CHANNEL);
  });
});
