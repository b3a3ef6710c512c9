import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { MINUTE } from '../../src/core/clock.js';
import { Permission } from '../../src/core/permissions.js';
import type { Application } from '../../src/modules/applications/applications.js';
import { updateApplication } from '../../src/modules/applications/applications.service.js';
import { enableBot } from '../../src/modules/applications/bots.service.js';
import { renderInstalledApps } from '../../src/modules/applications/installs.page.js';
import { listServerInstalls } from '../../src/modules/applications/installs.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { postForm } from '../support/oauth-factory.js';
import { csrfTokenIn, type PageAgent } from '../support/page-agent.js';
import { authorizePath, consentFields, createApp, freshPkce, ISSUER, location, signedIn } from './authorize.fixtures.js';
import { OPERATOR } from '../../src/core/actor.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';

const P = Permission;
const REDIRECT = 'https://bot.example/callback';

/**
 * Bot installs through the consent screen (issue #4; SPEC §1.3, §2.1 permissions, §4 notes,
 * §5.2, §5.6 rule 6): the server picker, the permission grant, private bots, "Require full
 * OAuth2 authorization", the code flow's extra parameters, reinstall and removal.
 */
describe('bot install', () => {
  let t: TestApp;
  let maker: Person;
  let makerAgent: PageAgent;
  let app: Application;
  let botUserId: string;
  /** Owner of the servers. */
  let sam: { agent: PageAgent; person: Person };
  /** Manage server and Manage webhooks, but neither Ban members nor Administrator. */
  let marian: { agent: PageAgent; person: Person };
  /** A member without Manage server. */
  let tuck: { agent: PageAgent; person: Person };
  /** Administrator. */
  let john: { agent: PageAgent; person: Person };

  beforeAll(async () => {
    t = await createTestApp();
    ({ person: maker, agent: makerAgent } = await signedIn(t, 'botmaker'));
    ({ app } = await createApp(t, maker, { name: 'Helper Bot', description: 'Keeps the server tidy.', redirectUris: [REDIRECT] }));
    ({ botUserId } = await enableBot(t.services, actingOf(OPERATOR), app.id));
    app = { ...app, botUserId };
    sam = await signedIn(t, 'sam');
    marian = await signedIn(t, 'marian');
    tuck = await signedIn(t, 'tuck');
    john = await signedIn(t, 'john');
  });
  afterAll(async () => t.close());

  /** A server owned by sam where marian moderates, tuck is a plain member and john an Administrator. */
  async function freshServer(name = 'Sherwood'): Promise<string> {
    const server = await createServer(t.services, personActingOf(sam.person.id), { name });
    const mods = await createRole(t.services, operatorActing(), server.id, { name: 'Moderators', permissions: P.MANAGE_SERVER | P.MANAGE_WEBHOOKS | P.VIEW_CHANNEL | P.SEND_MESSAGES });
    const admins = await createRole(t.services, operatorActing(), server.id, { name: 'Admins', permissions: P.ADMINISTRATOR });
    await addMember(t.services, operatorActing(), server.id, marian.person.id, [mods.id]);
    await addMember(t.services, operatorActing(), server.id, tuck.person.id);
    await addMember(t.services, operatorActing(), server.id, john.person.id, [admins.id]);
    return server.id;
  }

  function installPath(params: Record<string, string | undefined>, forApp: Application = app): string {
    return authorizePath({ client_id: forApp.id, scope: 'bot', ...params });
  }

  /**
   * The boxes of the consent form: what it sends by name (ticked grantable boxes, then the grantable
   * bits it does not list, as hidden fields), and the disabled ones' labels.
   */
  function boxes(body: string): { ticked: string[]; disabled: string[] } {
    const ticked = [...body.matchAll(/<input type="checkbox" id="[^"]+" name="permission" value="([A-Z_]+)" checked aria-describedby/g), ...body.matchAll(/<input type="hidden" name="permission" value="([A-Z_]+)">/g)].map((m) => m[1] as string);
    const disabled = [...body.matchAll(/<label class="check not-grantable"><input type="checkbox"[^>]* disabled[^>]*> <span><s>([^<]+)<\/s>/g)].map((m) => m[1] as string);
    return { ticked, disabled };
  }

  /** Opens the consent screen and presses Authorize with the given boxes ticked (all grantable ones by default). */
  async function install(agent: PageAgent, path: string, tick?: string[], extra: Record<string, string | string[]> = {}): Promise<LightMyRequestResponse> {
    const page = await agent.get(path);
    expect(page.statusCode).toBe(200);
    const fields = consentFields(page.body);
    return agent.postRaw('/app/oauth2/authorize', { ...fields, permission: tick ?? boxes(page.body).ticked, decision: 'authorize', ...extra });
  }

  async function managedRoles(serverId: string, appId = app.id) {
    const rows = await t.services.db.selectFrom('roles').selectAll().where('server_id', '=', serverId).where('managed_application_id', '=', appId).execute();
    return rows.map((r) => ({ id: String(r.id), name: r.name, permissions: BigInt(r.permissions) }));
  }

  async function botRoles(serverId: string, userId = botUserId): Promise<string[]> {
    const rows = await t.services.db.selectFrom('member_roles').select('role_id').where('server_id', '=', serverId).where('user_id', '=', userId).execute();
    return rows.map((r) => String(r.role_id));
  }

  async function isMember(serverId: string, userId = botUserId): Promise<boolean> {
    return (await t.services.db.selectFrom('members').select('user_id').where('server_id', '=', serverId).where('user_id', '=', userId).executeTakeFirst()) !== undefined;
  }

  async function installRow(serverId: string, appId = app.id) {
    return t.services.db.selectFrom('server_installs').selectAll().where('server_id', '=', serverId).where('application_id', '=', appId).executeTakeFirst();
  }

  async function nothingInstalled(serverId: string, appId = app.id, userId = botUserId): Promise<void> {
    expect(await isMember(serverId, userId)).toBe(false);
    expect(await managedRoles(serverId, appId)).toEqual([]);
    expect(await installRow(serverId, appId)).toBeUndefined();
  }

  describe('the server picker', () => {
    it('lists only the servers where the person holds Manage server (owner, Administrator and a role with it count)', async () => {
      const sherwood = await freshServer('Sherwood');
      const other = await createServer(t.services, personActingOf(sam.person.id), { name: 'Nottingham' });
      await addMember(t.services, operatorActing(), other.id, marian.person.id);
      const mine = await createServer(t.services, personActingOf(marian.person.id), { name: 'Marian Hall' });

      const page = await marian.agent.get(installPath({ permissions: String(P.SEND_MESSAGES | P.ADD_REACTIONS) }));
      expect(page.statusCode).toBe(200);
      // Before a server is chosen the requested permissions are listed without boxes, grouped, each with its line; Add reactions does nothing here (issue #24).
      expect(page.body).toContain('<legend>Text channel permissions</legend><p class="permission-item"><span>Send messages<br><span class="hint" id="perm-send_messages-hint">Post messages in channels.</span></span></p>');
      expect(page.body).not.toContain('Add reactions');
      expect(page.body).toContain('<h1>Add Helper Bot to a server</h1>');
      const options = [...page.body.matchAll(/<option value="(\d+)"[^>]*>([^<]+)<\/option>/g)].map((m) => [m[1], m[2]]);
      expect(options).toContainEqual([sherwood, 'Sherwood']);
      expect(options).toContainEqual([mine.id, 'Marian Hall']);
      expect(options.map((o) => o[0])).not.toContain(other.id);
      // No server chosen yet: nothing to authorize until one is.
      expect(page.body).toContain('<option value="" selected disabled>Select a server</option>');
      expect(page.body).not.toContain('value="authorize"');

      for (const who of [sam, john]) {
        const theirs = await who.agent.get(installPath({}));
        expect(theirs.body).toContain(`<option value="${sherwood}"`);
      }
    });

    it('a person with Manage server nowhere is told so and gets no Authorize button', async () => {
      const loner = await signedIn(t, 'loner');
      const server = await freshServer();
      await addMember(t.services, operatorActing(), server, loner.person.id);
      const page = await loner.agent.get(installPath({ permissions: '8' }));
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('You cannot add this bot to any server.');
      expect(page.body).not.toContain('<select');
      expect(page.body).not.toContain('value="authorize"');
      expect(page.body).toContain('value="cancel"');
    });

    it('server_id pre-selects a server, and choosing another re-renders with that server’s permissions (a GET, no script needed)', async () => {
      const sherwood = await freshServer();
      const mine = await createServer(t.services, personActingOf(marian.person.id), { name: 'Marian Hall 2' });
      const requested = String(P.BAN_MEMBERS | P.MANAGE_WEBHOOKS);

      const inSherwood = await marian.agent.get(installPath({ permissions: requested, server_id: sherwood }));
      expect(inSherwood.body).toMatch(new RegExp(`<option value="${sherwood}" selected>Sherwood</option>`));
      // Ban members does nothing here (issue #24): not listed, and not given since she lacks it.
      expect(boxes(inSherwood.body)).toEqual({ ticked: ['MANAGE_WEBHOOKS'], disabled: [] });
      // The picker is a GET form re-sending the request, so changing the server reloads this screen.
      expect(inSherwood.body).toContain('<form method="get" action="/app/oauth2/authorize" class="server-picker">');
      expect(inSherwood.body).toContain(`<input type="hidden" name="permissions" value="${requested}">`);

      const inHers = await marian.agent.get(installPath({ permissions: requested, server_id: mine.id }));
      expect(boxes(inHers.body)).toEqual({ ticked: ['MANAGE_WEBHOOKS', 'BAN_MEMBERS'], disabled: [] });
      expect(consentFields(inHers.body)['server_id']).toBe(mine.id);
    });

    it('disable_server_select=true locks the picker to server_id; Discord’s guild_id and disable_guild_select work too', async () => {
      const sherwood = await freshServer();
      for (const params of [
        { server_id: sherwood, disable_server_select: 'true' },
        { guild_id: sherwood, disable_guild_select: 'true' },
      ]) {
        const page = await marian.agent.get(installPath({ permissions: String(P.MANAGE_WEBHOOKS), ...params }));
        expect(page.statusCode).toBe(200);
        expect(page.body).toContain('Add to server: <strong>Sherwood</strong>');
        expect(page.body).not.toContain('<select');
        expect(consentFields(page.body)).toMatchObject({ server_id: sherwood, disable_server_select: 'true' });
        expect(page.body).toContain('value="authorize"');
      }
    });

    it('a link locked to a server where the person lacks Manage server says so, with no Authorize button', async () => {
      const sherwood = await freshServer();
      const page = await tuck.agent.get(installPath({ server_id: sherwood, disable_server_select: 'true' }));
      expect(page.statusCode).toBe(200);
      expect(page.body).toMatch(/This link is for a server you cannot add bots to|You cannot add this bot to any server/);
      expect(page.body).not.toContain('value="authorize"');
    });
  });

  describe('permissions', () => {
    it('shows the requested permissions by name: the ones not held marked not grantable, Administrator never granted', async () => {
      const sherwood = await freshServer();
      const requested = P.ADMINISTRATOR | P.BAN_MEMBERS | P.MANAGE_WEBHOOKS | P.VIEW_CHANNEL | P.SEND_MESSAGES;
      const page = await marian.agent.get(installPath({ permissions: String(requested), server_id: sherwood }));
      expect(boxes(page.body)).toEqual({ ticked: ['VIEW_CHANNEL', 'MANAGE_WEBHOOKS', 'SEND_MESSAGES'], disabled: ['Administrator'] });
      expect(page.body).toContain('<span class="hint">Never granted: a bot here is never an administrator.</span>');
      // Only permissions that do something here, grouped as Discord groups them, each with its line (issue #24).
      for (const heading of ['General server permissions', 'Text channel permissions', 'Advanced permissions']) expect(page.body).toContain(`<legend>${heading}</legend>`);
      expect(page.body).not.toContain('<legend>Membership permissions</legend>');
      expect(page.body).toContain('aria-describedby="perm-manage_webhooks-hint"> <span>Manage webhooks<br><span class="hint" id="perm-manage_webhooks-hint">Create, edit and delete webhooks and see their URLs.</span>');
      expect(page.body).not.toContain('Ban members');
      expect(page.body).toContain('<legend>Permissions for Helper Bot in Sherwood</legend>');
    });

    it('Authorize: the bot joins with a managed role named after the app holding requested ∩ held ∩ ticked, minus Administrator; the confirmation names the server', async () => {
      const sherwood = await freshServer();
      const requested = P.ADMINISTRATOR | P.BAN_MEMBERS | P.MANAGE_WEBHOOKS | P.VIEW_CHANNEL | P.SEND_MESSAGES;
      // Send messages unticked; Ban members and Administrator forged into the form.
      const res = await install(marian.agent, installPath({ permissions: String(requested), server_id: sherwood }), ['MANAGE_WEBHOOKS', 'VIEW_CHANNEL', 'BAN_MEMBERS', 'ADMINISTRATOR']);
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('<h1>Helper Bot was added to Sherwood</h1>');
      expect(res.body).toContain('<span class="pill">View channels</span> <span class="pill">Manage webhooks</span>');

      expect(await isMember(sherwood)).toBe(true);
      const roles = await managedRoles(sherwood);
      expect(roles).toEqual([{ id: expect.any(String), name: 'Helper Bot', permissions: P.MANAGE_WEBHOOKS | P.VIEW_CHANNEL }]);
      expect(await botRoles(sherwood)).toEqual([roles[0]?.id]);
      const row = await installRow(sherwood);
      expect(row).toMatchObject({ permissions: String(P.MANAGE_WEBHOOKS | P.VIEW_CHANNEL), installer_id: expect.anything() });
      expect(String(row?.installer_id)).toBe(marian.person.id);
      expect(Number(row?.commands)).toBe(0);
      // A plain install issues no code and creates no grant.
      expect(await t.services.db.selectFrom('oauth_grants').select('id').where('user_id', '=', marian.person.id).where('server_id', '=', sherwood).execute()).toEqual([]);
    });

    it('an Administrator (and the owner) can grant everything requested except Administrator', async () => {
      const sherwood = await freshServer();
      await install(john.agent, installPath({ permissions: String(P.ADMINISTRATOR | P.BAN_MEMBERS | P.KICK_MEMBERS), server_id: sherwood }));
      expect((await managedRoles(sherwood))[0]?.permissions).toBe(P.BAN_MEMBERS | P.KICK_MEMBERS);
    });

    it('installing again updates the same role and the install record; granting nothing then removes the role', async () => {
      const sherwood = await freshServer();
      await install(marian.agent, installPath({ permissions: String(P.MANAGE_WEBHOOKS), server_id: sherwood }));
      const [first] = await managedRoles(sherwood);
      const firstRow = await installRow(sherwood);

      t.clock.advance(MINUTE);
      const res = await install(sam.agent, installPath({ permissions: String(P.BAN_MEMBERS | P.VIEW_CHANNEL), server_id: sherwood, scope: 'bot applications.commands' }));
      expect(res.statusCode).toBe(200);
      const [second] = await managedRoles(sherwood);
      expect(second).toEqual({ id: first?.id, name: 'Helper Bot', permissions: P.BAN_MEMBERS | P.VIEW_CHANNEL });
      const row = await installRow(sherwood);
      expect(String(row?.installer_id)).toBe(sam.person.id);
      expect(row?.permissions).toBe(String(P.BAN_MEMBERS | P.VIEW_CHANNEL));
      expect(Number(row?.commands)).toBe(1);
      expect(Number(row?.updated_at)).toBe(Number(firstRow?.updated_at) + MINUTE);
      expect(Number(row?.created_at)).toBe(Number(firstRow?.created_at));

      await install(sam.agent, installPath({ permissions: String(P.BAN_MEMBERS), server_id: sherwood }), []);
      expect(await managedRoles(sherwood)).toEqual([]);
      expect(await botRoles(sherwood)).toEqual([]);
      expect(await isMember(sherwood)).toBe(true);
      expect((await installRow(sherwood))?.permissions).toBe('0');
    });

    it('nothing granted: the bot joins with no role', async () => {
      const sherwood = await freshServer();
      const res = await install(marian.agent, installPath({ server_id: sherwood }));
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('It has no permissions of its own');
      expect(await isMember(sherwood)).toBe(true);
      expect(await managedRoles(sherwood)).toEqual([]);
    });

    it('a forged POST naming a server where the person lacks Manage server (or is no member) is refused, and nothing is installed', async () => {
      const sherwood = await freshServer();
      const elsewhere = await createServer(t.services, personActingOf(maker.id), { name: 'Elsewhere' });
      const page = await tuck.agent.get(installPath({ permissions: String(P.SEND_MESSAGES) }));
      const fields = consentFields(page.body);
      for (const serverId of [sherwood, elsewhere.id, '123', 'nope']) {
        const res = await tuck.agent.postRaw('/app/oauth2/authorize', { ...fields, server_id: serverId, permission: 'SEND_MESSAGES', decision: 'authorize' });
        expect(res.statusCode).toBe(403);
      }
      await nothingInstalled(sherwood);
      await nothingInstalled(elsewhere.id);
      // Without any server chosen.
      const none = await marian.agent.get(installPath({}));
      const res = await marian.agent.postRaw('/app/oauth2/authorize', { ...consentFields(none.body), decision: 'authorize' });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('Choose a server');
    });

    it('Manage server lost between the screen and the click: the POST re-checks and refuses', async () => {
      const sherwood = await freshServer();
      const page = await marian.agent.get(installPath({ server_id: sherwood }));
      await t.services.db.deleteFrom('member_roles').where('server_id', '=', sherwood).where('user_id', '=', marian.person.id).execute();
      const res = await marian.agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), decision: 'authorize' });
      expect(res.statusCode).toBe(403);
      await nothingInstalled(sherwood);
    });

    it('a malformed permissions value is refused: a page for a plain install, invalid_request on the redirect URI in the code flow', async () => {
      const page = await marian.agent.get(installPath({ permissions: 'all' }));
      expect(page.statusCode).toBe(400);
      expect(page.body).toContain('Permissions must be a permission bitfield');
      const res = await marian.agent.get(installPath({ permissions: '-1', response_type: 'code', redirect_uri: REDIRECT, code_challenge: freshPkce().challenge, code_challenge_method: 'S256' }));
      expect(location(res).searchParams.get('error')).toBe('invalid_request');
    });

    it('Cancel installs nothing: a page for a plain install, access_denied for the code flow', async () => {
      const sherwood = await freshServer();
      const page = await marian.agent.get(installPath({ server_id: sherwood }));
      const res = await marian.agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), decision: 'cancel' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('Helper Bot was not added');
      const code = await marian.agent.get(installPath({ server_id: sherwood, response_type: 'code', redirect_uri: REDIRECT, code_challenge: freshPkce().challenge, code_challenge_method: 'S256' }));
      const denied = await marian.agent.postRaw('/app/oauth2/authorize', { ...consentFields(code.body), decision: 'cancel' });
      expect(location(denied).searchParams.get('error')).toBe('access_denied');
      await nothingInstalled(sherwood);
    });
  });

  describe('what the app allows', () => {
    it('a private bot is installed by its owner; anyone else gets an error page and nothing is installed', async () => {
      const { app: priv } = await createApp(t, maker, { name: 'Secret Bot', redirectUris: [REDIRECT], botPublic: false });
      const { botUserId: privBot } = await enableBot(t.services, actingOf(OPERATOR), priv.id);
      const sherwood = await freshServer();
      await addMember(t.services, operatorActing(), sherwood, maker.id);
      const mine = await createServer(t.services, personActingOf(maker.id), { name: 'Maker HQ' });

      const refused = await marian.agent.get(installPath({ server_id: sherwood }, priv));
      expect(refused.statusCode).toBe(403);
      expect(refused.body).toContain('This bot is private');
      // A POST forged from another app's screen is refused the same way.
      const other = await marian.agent.get(installPath({ server_id: sherwood }));
      const forged = await marian.agent.postRaw('/app/oauth2/authorize', { ...consentFields(other.body), client_id: priv.id, decision: 'authorize' });
      expect(forged.statusCode).toBe(403);
      await nothingInstalled(sherwood, priv.id, privBot);

      const ok = await install(makerAgent, installPath({ server_id: mine.id, permissions: String(P.SEND_MESSAGES) }, priv));
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toContain('Secret Bot was added to Maker HQ');
      expect(await isMember(mine.id, privBot)).toBe(true);
    });

    it('scope bot for an app without a bot: invalid_scope on the redirect URI, or a page without one', async () => {
      const { app: nobot } = await createApp(t, maker, { name: 'No Bot', redirectUris: [REDIRECT] });
      const withRedirect = await marian.agent.get(installPath({ redirect_uri: REDIRECT, response_type: 'code', code_challenge: freshPkce().challenge, code_challenge_method: 'S256' }, nobot));
      expect(location(withRedirect).searchParams.get('error')).toBe('invalid_scope');
      const plain = await marian.agent.get(installPath({}, nobot));
      expect(plain.statusCode).toBe(400);
      expect(plain.body).toContain('Scope bot was requested, but this application has no bot.');
    });

    it('"Require full OAuth2 authorization": a link without redirect_uri and response_type=code is an error page; with them the install completes through the code flow', async () => {
      const { app: strict, clientSecret } = await createApp(t, maker, { name: 'Strict Bot', redirectUris: [REDIRECT], botRequireCodeGrant: true, confidential: true });
      await enableBot(t.services, actingOf(OPERATOR), strict.id);
      const sherwood = await freshServer();

      for (const params of [{}, { redirect_uri: REDIRECT }, { response_type: 'code' }]) {
        const res = await marian.agent.get(installPath({ server_id: sherwood, ...params }, strict));
        expect(res.statusCode).toBe(400);
        expect(res.body).toContain('Strict Bot requires full OAuth2 authorization');
        expect(res.body).not.toContain('value="authorize"');
      }
      const res = await install(marian.agent, installPath({ server_id: sherwood, response_type: 'code', redirect_uri: REDIRECT, state: 's1', permissions: String(P.MANAGE_WEBHOOKS) }, strict));
      const to = location(res);
      expect(to.origin + to.pathname).toBe(REDIRECT);
      expect(to.searchParams.get('code')).toMatch(/^ghac_/);
      expect(to.searchParams.get('server_id')).toBe(sherwood);
      // Issue #21 §5: the bot joins at the code exchange, not at consent.
      const strictBot = (await t.services.db.selectFrom('applications').select('bot_user_id').where('id', '=', strict.id).executeTakeFirstOrThrow()).bot_user_id;
      expect(await managedRoles(sherwood, strict.id)).toHaveLength(0);
      expect(await isMember(sherwood, String(strictBot))).toBe(false);
      const exchanged = await postForm(t, '/api/oauth2/token', { grant_type: 'authorization_code', code: to.searchParams.get('code') as string, redirect_uri: REDIRECT, client_id: strict.id, client_secret: clientSecret as string });
      expect(exchanged.statusCode).toBe(200);
      expect(await managedRoles(sherwood, strict.id)).toHaveLength(1);
      expect(await isMember(sherwood, String(strictBot))).toBe(true);
      expect(await installRow(sherwood, strict.id)).toMatchObject({ installer_id: expect.anything() });
    });

    it('issue #21 §5: for an app that requires the code grant, a code never exchanged adds nothing, and a replay ends the tokens but not the install the first exchange made', async () => {
      const { app: strict, clientSecret } = await createApp(t, maker, { name: 'Exchange Bot', redirectUris: [REDIRECT], botRequireCodeGrant: true, confidential: true });
      const { botUserId: strictBot } = await enableBot(t.services, actingOf(OPERATOR), strict.id);
      const sherwood = await freshServer();
      const path = installPath({ server_id: sherwood, response_type: 'code', redirect_uri: REDIRECT, permissions: String(P.MANAGE_WEBHOOKS) }, strict);
      const unused = location(await install(marian.agent, path)).searchParams.get('code') as string;
      t.clock.advance(11 * MINUTE);
      const expired = await postForm(t, '/api/oauth2/token', { grant_type: 'authorization_code', code: unused, redirect_uri: REDIRECT, client_id: strict.id, client_secret: clientSecret as string });
      expect(expired.json()).toMatchObject({ error: 'invalid_grant' });
      await nothingInstalled(sherwood, strict.id, strictBot);

      const code = location(await install(marian.agent, path)).searchParams.get('code') as string;
      const fields = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: strict.id, client_secret: clientSecret as string };
      const first = await postForm(t, '/api/oauth2/token', fields);
      expect(first.statusCode).toBe(200);
      expect(await isMember(sherwood, strictBot)).toBe(true);
      expect((await postForm(t, '/api/oauth2/token', fields)).json()).toMatchObject({ error: 'invalid_grant' });
      const me = await t.app.inject({ method: 'GET', url: '/api/v1/oauth2/@me', headers: { authorization: `Bearer ${(first.json() as { access_token: string }).access_token}` } });
      expect(me.statusCode).toBe(401);
      // docs/bot-installs.md: revoking the authorization ends its tokens; the bot leaves only when removed from the server.
      expect(await isMember(sherwood, strictBot)).toBe(true);
    });

    it('turning the setting on later refuses links that worked before', async () => {
      const { app: later } = await createApp(t, maker, { name: 'Later Bot', redirectUris: [REDIRECT] });
      await enableBot(t.services, actingOf(OPERATOR), later.id);
      const sherwood = await freshServer();
      expect((await marian.agent.get(installPath({ server_id: sherwood }, later))).statusCode).toBe(200);
      await updateApplication(t.services, actingOf(OPERATOR), later.id, { botRequireCodeGrant: true });
      expect((await marian.agent.get(installPath({ server_id: sherwood }, later))).statusCode).toBe(400);
    });
  });

  describe('through the code flow', () => {
    // Each request gets a new PKCE pair (B10); exchange() uses the latest one.
    let pkce = freshPkce();
    function codeParams(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
      pkce = freshPkce();
      return { response_type: 'code', redirect_uri: REDIRECT, state: 'st&te', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...extra };
    }

    async function exchange(code: string) {
      return postForm(t, '/api/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.id, code_verifier: pkce.verifier });
    }

    it('redirects with code, state, iss, server_id (and guild_id) and the granted permissions; the token response carries the server', async () => {
      const sherwood = await freshServer();
      const requested = P.BAN_MEMBERS | P.MANAGE_WEBHOOKS | P.SEND_MESSAGES;
      const res = await install(marian.agent, installPath(codeParams({ permissions: String(requested), server_id: sherwood })), ['MANAGE_WEBHOOKS']);
      expect(res.statusCode).toBe(303);
      const to = location(res);
      expect([...to.searchParams.keys()]).toEqual(['code', 'state', 'iss', 'server_id', 'guild_id', 'permissions']);
      expect(to.searchParams.get('state')).toBe('st&te');
      expect(to.searchParams.get('iss')).toBe(ISSUER);
      expect(to.searchParams.get('server_id')).toBe(sherwood);
      expect(to.searchParams.get('guild_id')).toBe(sherwood);
      expect(to.searchParams.get('permissions')).toBe(String(P.MANAGE_WEBHOOKS));
      expect((await managedRoles(sherwood))[0]?.permissions).toBe(P.MANAGE_WEBHOOKS);

      const token = await exchange(to.searchParams.get('code') as string);
      expect(token.statusCode).toBe(200);
      expect(token.json()).toMatchObject({ scope: 'bot', token_type: 'Bearer', server: { id: sherwood, name: 'Sherwood', icon: null, icon_url: null, owner_id: sam.person.id } });
      // Discord's name for the same server.
      expect(token.json().guild).toEqual(token.json().server);
      const grant = await t.services.db.selectFrom('oauth_grants').selectAll().where('user_id', '=', marian.person.id).where('server_id', '=', sherwood).executeTakeFirst();
      expect(grant?.permissions).toBe(String(P.MANAGE_WEBHOOKS));
    });

    it('identify with bot is granted in the same consent: the tokens read the person', async () => {
      const sherwood = await freshServer();
      const page = await marian.agent.get(installPath(codeParams({ scope: 'identify bot', server_id: sherwood })));
      expect(page.body).toContain('Helper Bot will also be able to:');
      expect(page.body).toContain('Know your name, username and avatar');
      const res = await install(marian.agent, installPath(codeParams({ scope: 'identify bot', server_id: sherwood })));
      const token = (await exchange(location(res).searchParams.get('code') as string)).json() as { access_token: string; scope: string };
      expect(token.scope).toBe('identify bot');
      const me = await t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: { authorization: `Bearer ${token.access_token}` } });
      expect(me.statusCode).toBe(200);
      expect(me.json()).toMatchObject({ id: marian.person.id, username: 'marian' });
    });

    it('the consent for bot is never skipped: prompt=none and prompt=consent both show the screen, even after an earlier install', async () => {
      const sherwood = await freshServer();
      await install(marian.agent, installPath(codeParams({ scope: 'identify bot', server_id: sherwood })));
      for (const prompt of ['none', 'consent', undefined]) {
        const page = await marian.agent.get(installPath(codeParams({ scope: 'identify bot', server_id: sherwood, prompt })));
        expect(page.statusCode).toBe(200);
        expect(page.body).toContain('<h1>Add Helper Bot to a server</h1>');
      }
    });

    it('a plain install needs no redirect_uri, but one that is sent must be registered', async () => {
      const bad = await marian.agent.get(installPath({ redirect_uri: 'https://evil.example/cb' }));
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toContain('not one the application registered');
      const page = await marian.agent.get(installPath({}));
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('nothing is sent to the app');
      expect(csrfTokenIn(page.body)).toBeDefined();
    });
  });

  describe('Server settings → Integrations', () => {
    it('lists the installed app with its permissions, its commands when applications.commands was granted, and who added it', async () => {
      const sherwood = await freshServer();
      const now = t.clock.now();
      for (const [name, description] of [
        ['roll', 'Rolls a die'],
        ['ban', 'Bans someone'],
      ] as const) {
        await t.services.db.insertInto('application_commands').values({ id: t.services.ids.next(), application_id: app.id, name, description, options: '[]', type: 1, created_at: now }).execute();
      }
      await install(marian.agent, installPath({ scope: 'bot applications.commands', server_id: sherwood, permissions: String(P.SEND_MESSAGES | P.VIEW_CHANNEL) }));
      const installs = await listServerInstalls(t.services, sherwood);
      expect(installs).toEqual([
        {
          application: { id: app.id, name: 'Helper Bot', iconUrl: null, botUserId },
          permissions: { bits: P.SEND_MESSAGES | P.VIEW_CHANNEL, names: ['VIEW_CHANNEL', 'SEND_MESSAGES'], labels: ['View channels', 'Send messages'] },
          commandsEnabled: true,
          commands: [
            { name: 'ban', description: 'Bans someone' },
            { name: 'roll', description: 'Rolls a die' },
          ],
          installer: { id: marian.person.id, username: 'marian', name: 'Marian' },
          installedAt: expect.any(Number),
          updatedAt: expect.any(Number),
        },
      ]);
      const markup = renderInstalledApps({ serverId: sherwood, apps: installs, canManage: true }).value;
      expect(markup).toContain('Helper Bot <span class="badge">BOT</span>');
      expect(markup).toContain('<span class="pill">View channels</span>');
      expect(markup).toContain('<code>/roll</code>');
      // Removing asks first (issue #24): the list links to the confirmation page.
      expect(markup).toContain(`href="/servers/${sherwood}/settings/integrations/apps/${app.id}/remove"`);
      expect(renderInstalledApps({ serverId: sherwood, apps: installs, canManage: false }).value).not.toContain('/remove');

      // Without applications.commands the commands are not listed.
      await install(marian.agent, installPath({ server_id: sherwood, permissions: String(P.SEND_MESSAGES) }));
      expect((await listServerInstalls(t.services, sherwood))[0]).toMatchObject({ commandsEnabled: false, commands: [] });
    });

    it('someone with Manage server removes the bot: its membership, role and install record go; its webhooks stay', async () => {
      const sherwood = await freshServer();
      await install(marian.agent, installPath({ server_id: sherwood, permissions: String(P.MANAGE_WEBHOOKS) }));
      const channel = await t.services.db.selectFrom('channels').select('id').where('server_id', '=', sherwood).executeTakeFirstOrThrow();
      const webhookId = t.services.ids.next();
      await t.services.db
        .insertInto('webhooks')
        .values({ id: webhookId, token_hash: 'x'.repeat(64), server_id: sherwood, channel_id: String(channel.id), name: 'Helper hook', avatar_url: null, application_id: app.id, creator_id: botUserId, created_at: t.clock.now() })
        .execute();
      const path = `/servers/${sherwood}/settings/integrations/apps/${app.id}/remove`;

      // Removing asks first, naming the app and what goes (issue #24); the question changes nothing.
      const confirm = await marian.agent.get(path);
      expect(confirm.statusCode).toBe(200);
      expect(confirm.body).toContain('Remove Helper Bot from this server?');
      expect(confirm.body).toContain('its role (Manage webhooks) is deleted');
      expect(confirm.body).toContain(`action="${path}"`);
      expect(await isMember(sherwood)).toBe(true);
      expect((await tuck.agent.get(path)).statusCode).toBe(403);

      // tuck lacks Manage server: refused, nothing removed.
      const refused = await tuck.agent.postRaw(path, { _csrf: csrfTokenIn((await tuck.agent.get('/')).body) as string });
      expect(refused.statusCode).toBe(403);
      expect(await isMember(sherwood)).toBe(true);

      const res = await marian.agent.postRaw(path, { _csrf: csrfTokenIn((await marian.agent.get('/')).body) as string });
      expect(res.statusCode).toBe(303);
      expect(res.headers['location']).toBe(`/servers/${sherwood}/settings/integrations?done=app-removed`);
      await nothingInstalled(sherwood);
      expect(await t.services.db.selectFrom('webhooks').select('id').where('id', '=', webhookId).executeTakeFirst()).toBeDefined();
      expect(await listServerInstalls(t.services, sherwood)).toEqual([]);

      // Removing again: the app is not installed any more.
      const again = await marian.agent.postRaw(path, { _csrf: csrfTokenIn((await marian.agent.get('/')).body) as string });
      expect(again.statusCode).toBe(404);
    });

    it('issue #21 §5: a bot holding a permission the moderator lacks is out of their reach: they can neither remove it nor change its roles', async () => {
      const sherwood = await freshServer();
      // john (Administrator) adds the bot with Ban members, which marian (Moderators) lacks.
      await install(john.agent, installPath({ server_id: sherwood, permissions: String(P.BAN_MEMBERS | P.VIEW_CHANNEL) }));
      expect(await isMember(sherwood)).toBe(true);
      const plain = await createRole(t.services, operatorActing(), sherwood, { name: 'Plain', permissions: P.VIEW_CHANNEL });
      const roleManagers = await createRole(t.services, operatorActing(), sherwood, { name: 'Role managers', permissions: P.MANAGE_ROLES | P.MANAGE_SERVER | P.VIEW_CHANNEL });
      const csrf = async () => csrfTokenIn((await marian.agent.get('/')).body) as string;
      await t.services.db.insertInto('member_roles').values({ server_id: sherwood, user_id: marian.person.id, role_id: roleManagers.id }).execute();

      const removed = await marian.agent.postRaw(`/servers/${sherwood}/settings/integrations/apps/${app.id}/remove`, { _csrf: await csrf() });
      expect(removed.statusCode).toBe(403);
      expect(await isMember(sherwood)).toBe(true);
      expect(await installRow(sherwood)).toBeDefined();

      const before = (await botRoles(sherwood)).sort();
      const edited = await marian.agent.postRaw(`/servers/${sherwood}/members/${botUserId}/roles`, { _csrf: await csrf(), roles: [plain.id] });
      expect(edited.statusCode).toBe(403);
      expect((await botRoles(sherwood)).sort()).toEqual(before);

      // john holds everything the bot holds: both work for him.
      const johnCsrf = csrfTokenIn((await john.agent.get('/')).body) as string;
      expect((await john.agent.postRaw(`/servers/${sherwood}/members/${botUserId}/roles`, { _csrf: johnCsrf, roles: [plain.id] })).statusCode).toBe(303);
      expect((await john.agent.postRaw(`/servers/${sherwood}/settings/integrations/apps/${app.id}/remove`, { _csrf: johnCsrf })).statusCode).toBe(303);
      await nothingInstalled(sherwood);
    });
  });
});
