import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActing } from '../../src/core/acting.js';
import { HOUR, MINUTE } from '../../src/core/clock.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addResourceServer } from '../../src/modules/resource-servers/resource-servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCommand } from '../support/directory-fixtures.js';
import { given, type TestClient } from '../support/given.js';
import { basicAuth, getWithBearer, postForm } from '../support/oauth-factory.js';
import type { PageAgent } from '../support/page-agent.js';
import { answerConsent, authorizePath, freshPkce, location, requestFor } from './authorize.fixtures.js';

const TOKEN = '/api/oauth2/token';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const JWT = 'urn:ietf:params:oauth:token-type:jwt';
const MCP = 'https://mcp.example/';
const MCP_JWT = 'https://mcp-jwt.example/';
const PLAIN = 'https://plain.example/';

/** Issue #41: RFC 8693 token exchange, so a resource server acts for the person on Gatehouse's own API. */
describe('token exchange (RFC 8693): a resource server acting for the person on this service’s API', () => {
  let t: TestApp;
  let owner: Person;
  /** The app serving the MCP servers (confidential): the one that exchanges. */
  let mcp: TestClient;
  /** Another confidential app, serving nothing of the person's. */
  let other: TestClient;
  /** The agent's client (public), asking the person for access to the MCP server. */
  let agentClient: TestClient;
  let agent: PageAgent;
  let person: Person;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await given.person(t, { username: 'mcpowner' });
    mcp = await given.confidentialApp(t, { owner, name: 'Notes MCP' });
    other = await given.confidentialApp(t, { owner, name: 'Other API' });
    agentClient = await given.publicApp(t, { name: 'Agent', redirectUris: ['https://agent.example/cb'] });
    await addResourceServer(t.services, cliActing(t.clock), mcp.clientId, { identifier: MCP, scopes: ['notes:read'], scopeDescriptions: ['Read your notes'], delegatedScopes: ['identify', 'guilds'] });
    await addResourceServer(t.services, cliActing(t.clock), mcp.clientId, { identifier: MCP_JWT, scopes: ['notes:jwt'], scopeDescriptions: [], delegatedScopes: ['identify'], jwtAccessTokens: true });
    await addResourceServer(t.services, cliActing(t.clock), mcp.clientId, { identifier: PLAIN, scopes: ['plain'], scopeDescriptions: [] });
    ({ agent, person } = await given.signedIn(t));
  });
  afterAll(async () => t.close());

  const mcpAuth = () => ({ headers: { authorization: basicAuth(mcp.clientId, mcp.clientSecret as string) } });
  const exchange = (fields: Record<string, string>, options: { headers?: Record<string, string> } = mcpAuth()) => postForm(t, TOKEN, { grant_type: EXCHANGE, subject_token_type: ACCESS_TOKEN, ...fields }, options);
  const countAccessTokens = async () => Number((await t.services.db.selectFrom('oauth_access_tokens').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  /** The agent's code flow for `resource`, consented by the person; the agent's token response. */
  async function subjectFor(resource: string, scope: string): Promise<Record<string, string | number>> {
    const pkce = freshPkce();
    const res = await answerConsent(agent, authorizePath(requestFor(agentClient.app, { scope, resource, code_challenge: pkce.challenge })), 'authorize');
    const code = location(res).searchParams.get('code') as string;
    const exchanged = await postForm(t, TOKEN, { grant_type: 'authorization_code', code, redirect_uri: agentClient.redirectUri, client_id: agentClient.clientId, code_verifier: pkce.verifier });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    return exchanged.json() as Record<string, string | number>;
  }

  describe('declaring delegated scopes', () => {
    it('apps resource add --delegate takes identify, email and guilds (stored as servers) and prints delegated_scopes; anything else is 50035', async () => {
      const added = await runCommand(t, 'apps resource add', ['--app', other.clientId, '--identifier', 'https://cli.example/', '--scope', 'a', '--delegate', 'identify', '--delegate', 'guilds']);
      expect(added).toMatchObject({ identifier: 'https://cli.example/', delegated_scopes: ['identify', 'servers'] });
      const listed = await runCommand(t, 'apps resource list', ['--app', other.clientId]);
      expect(listed['resource_servers']).toEqual([expect.objectContaining({ delegated_scopes: ['identify', 'servers'] })]);
      for (const refused of ['bot', 'webhook.incoming', 'openid', 'nonsense']) {
        await expect(runCommand(t, 'apps resource add', ['--app', other.clientId, '--identifier', 'https://refused.example/', '--scope', 'a', '--delegate', refused])).rejects.toMatchObject({ code: 50035 });
      }
      await runCommand(t, 'apps resource remove', ['--app', other.clientId, '--identifier', 'https://cli.example/']);
    });

    it('the portal form offers the delegable scopes as checkboxes and the app page lists what a resource server delegates', async () => {
      const { agent: dev, person: developer } = await given.signedIn(t);
      const app = await given.confidentialApp(t, { owner: developer, name: 'Portal MCP' });
      const page = `/developers/applications/${app.clientId}`;
      const form = await dev.get(page);
      for (const name of ['identify', 'email', 'servers']) expect(form.body).toContain(`<input type="checkbox" name="delegate" value="${name}">`);
      const added = await dev.submitAndFollow(page, `${page}/resource-servers`, { identifier: 'https://portal-mcp.example/', scopes: 'notes Read notes', delegate: ['identify', 'servers'] });
      expect(added.body).toContain("May act for the person on this service's API with <code>identify</code>, <code>servers</code> (token exchange).");
    });
  });

  describe('the consent screen', () => {
    it('beneath the API’s scopes, “<app> can also, on your behalf, on <service>:” lists the delegated scopes in the screen’s words', async () => {
      const page = await agent.get(authorizePath(requestFor(agentClient.app, { scope: 'notes:read', resource: MCP, code_challenge: freshPkce().challenge })));
      expect(page.statusCode).toBe(200);
      const body = page.body;
      expect(body).toContain('Notes MCP can also, on your behalf, on Gatehouse:');
      expect(body.indexOf('Read your notes')).toBeLessThan(body.indexOf('can also, on your behalf'));
      const section = body.slice(body.indexOf('can also, on your behalf'));
      expect(section).toContain('Know your name, username and avatar');
      expect(section).toContain('See the list of servers you are in and your permissions there');
      expect(section).not.toContain('Know your e-mail address');
    });

    it('a resource server that delegates nothing shows no such section', async () => {
      const page = await agent.get(authorizePath(requestFor(agentClient.app, { scope: 'plain', resource: PLAIN, code_challenge: freshPkce().challenge })));
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain('can also, on your behalf');
    });

    it('approving records the delegated scopes on the authorization', async () => {
      const before = await t.services.db.selectFrom('oauth_grants').select('id').where('user_id', '=', person.id).execute();
      await subjectFor(MCP, 'notes:read');
      const grants = await t.services.db.selectFrom('oauth_grants').select(['id', 'delegated_scopes']).where('user_id', '=', person.id).execute();
      const created = grants.filter((g) => !before.some((b) => String(b.id) === String(g.id)));
      expect(created.map((g) => g.delegated_scopes)).toEqual(['identify servers']);
    });
  });

  describe('the exchange', () => {
    it('an opaque subject token becomes a Gatehouse API token for the same person: issued_token_type, Bearer, expires_in, scope, no refresh token', async () => {
      const subject = await subjectFor(MCP, 'notes:read');
      const res = await exchange({ subject_token: subject['access_token'] as string });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as Record<string, unknown>;
      expect(body).toEqual({ access_token: expect.stringMatching(/^ghat_/), issued_token_type: ACCESS_TOKEN, token_type: 'Bearer', expires_in: 3600, scope: 'identify servers' });
      const me = await getWithBearer(t, '/api/v1/users/@me', body['access_token'] as string);
      expect(me.statusCode).toBe(200);
      expect(me.json()).toMatchObject({ id: person.id, username: person.username });
      expect((await getWithBearer(t, '/api/v1/users/@me/guilds', body['access_token'] as string)).statusCode).toBe(200);
      // The subject token itself stays for the MCP server, refused by this service's API.
      expect((await getWithBearer(t, '/api/v1/users/@me', subject['access_token'] as string)).statusCode).toBe(401);
    });

    it('client_secret_post authenticates as well as client_secret_basic', async () => {
      const subject = await subjectFor(MCP, 'notes:read');
      const res = await exchange({ subject_token: subject['access_token'] as string, client_id: mcp.clientId, client_secret: mcp.clientSecret as string }, {});
      expect(res.statusCode, res.body).toBe(200);
    });

    it('the issued token lives no longer than the subject token’s rest', async () => {
      const subject = await subjectFor(MCP, 'notes:read');
      t.clock.advance(40 * MINUTE);
      const body = (await exchange({ subject_token: subject['access_token'] as string })).json() as { expires_in: number; access_token: string };
      expect(body.expires_in).toBe(20 * 60);
      t.clock.advance(20 * MINUTE);
      expect((await getWithBearer(t, '/api/v1/users/@me', body.access_token)).statusCode).toBe(401);
    });

    it('an RFC 9068 JWT subject token is accepted as access_token or jwt, and the issued token ends with it (5 minutes at most)', async () => {
      const subject = await subjectFor(MCP_JWT, 'notes:jwt');
      expect((subject['access_token'] as string).split('.')).toHaveLength(3);
      for (const type of [ACCESS_TOKEN, JWT]) {
        const res = await exchange({ subject_token: subject['access_token'] as string, subject_token_type: type });
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json() as { expires_in: number; scope: string; access_token: string };
        expect(body.scope).toBe('identify');
        expect(body.expires_in).toBeLessThanOrEqual(300);
        expect((await getWithBearer(t, '/api/v1/users/@me', body.access_token)).statusCode).toBe(200);
      }
    });

    it('scope narrows to a subset of what was delegated (guilds names servers); a scope not delegated is invalid_scope', async () => {
      const subject = (await subjectFor(MCP, 'notes:read'))['access_token'] as string;
      const identify = (await exchange({ subject_token: subject, scope: 'identify' })).json() as { scope: string; access_token: string };
      expect(identify.scope).toBe('identify');
      expect((await getWithBearer(t, '/api/v1/users/@me/guilds', identify.access_token)).statusCode).toBe(403);
      expect((await exchange({ subject_token: subject, scope: 'guilds' })).json()).toMatchObject({ scope: 'servers' });
      for (const scope of ['email', 'identify email', 'bot', 'notes:read']) {
        const res = await exchange({ subject_token: subject, scope });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ error: 'invalid_scope' });
      }
    });

    it('a resource or audience other than this service’s API is invalid_target; its base URL is accepted', async () => {
      const subject = (await subjectFor(MCP, 'notes:read'))['access_token'] as string;
      expect((await exchange({ subject_token: subject, resource: 'http://localhost:8080/' })).statusCode).toBe(200);
      expect((await exchange({ subject_token: subject, audience: 'http://localhost:8080' })).statusCode).toBe(200);
      for (const fields of [{ resource: MCP }, { audience: 'https://elsewhere.example/' }, { resource: 'not a url' }] as Record<string, string>[]) {
        const res = await exchange({ subject_token: subject, ...fields });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ error: 'invalid_target' });
      }
    });
  });

  describe('refusals change nothing', () => {
    it('a public client is unauthorized_client; a wrong secret is invalid_client', async () => {
      const subject = (await subjectFor(MCP, 'notes:read'))['access_token'] as string;
      const before = await countAccessTokens();
      const pub = await exchange({ subject_token: subject, client_id: agentClient.clientId }, {});
      expect(pub.statusCode).toBe(400);
      expect(pub.json()).toMatchObject({ error: 'unauthorized_client' });
      const wrong = await exchange({ subject_token: subject }, { headers: { authorization: basicAuth(mcp.clientId, 'wrong') } });
      expect(wrong.statusCode).toBe(401);
      expect(await countAccessTokens()).toBe(before);
    });

    it('an unknown, expired or revoked subject token, one for another app’s API, for this service’s API, or an app’s own token is invalid_grant', async () => {
      const forMcp = (await subjectFor(MCP, 'notes:read'))['access_token'] as string;
      // The agent's token for this service's own API (no resource).
      const pkce = freshPkce();
      const consented = await answerConsent(agent, authorizePath(requestFor(agentClient.app, { scope: 'identify', code_challenge: pkce.challenge })), 'authorize');
      const own = (await postForm(t, TOKEN, { grant_type: 'authorization_code', code: location(consented).searchParams.get('code') as string, redirect_uri: agentClient.redirectUri, client_id: agentClient.clientId, code_verifier: pkce.verifier })).json() as { access_token: string };
      const appOnly = (await postForm(t, TOKEN, { grant_type: 'client_credentials', resource: MCP }, mcpAuth())).json() as { access_token: string };
      const before = await countAccessTokens();
      const cases: [string, Record<string, string>, { headers?: Record<string, string> }][] = [
        ['unknown', { subject_token: 'ghat_unknownunknownunknownunknownunknown' }, mcpAuth()],
        ['not a token', { subject_token: 'x' }, mcpAuth()],
        ['another app asks', { subject_token: forMcp }, { headers: { authorization: basicAuth(other.clientId, other.clientSecret as string) } }],
        ['this service’s API', { subject_token: own.access_token }, mcpAuth()],
        ['an app’s own token', { subject_token: appOnly.access_token }, mcpAuth()],
        ['a jwt type for an opaque token', { subject_token: forMcp, subject_token_type: JWT }, mcpAuth()],
      ];
      for (const [label, fields, options] of cases) {
        const res = await exchange(fields, options);
        expect(res.statusCode, label).toBe(400);
        expect(res.json(), label).toMatchObject({ error: 'invalid_grant' });
      }
      t.clock.advance(HOUR);
      const expired = await exchange({ subject_token: forMcp });
      expect(expired.json()).toMatchObject({ error: 'invalid_grant' });
      expect(await countAccessTokens()).toBe(before);
    });

    it('missing or unsupported token types, or an actor token, are invalid_request', async () => {
      const subject = (await subjectFor(MCP, 'notes:read'))['access_token'] as string;
      const before = await countAccessTokens();
      const cases: Record<string, string>[] = [
        { subject_token_type: 'urn:ietf:params:oauth:token-type:refresh_token', subject_token: subject },
        { subject_token_type: 'urn:ietf:params:oauth:token-type:id_token', subject_token: subject },
        { subject_token: subject, requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' },
        // RFC 8693 §1.1: no separate actor; the authenticated client acts.
        { subject_token: subject, actor_token: subject, actor_token_type: ACCESS_TOKEN },
      ];
      for (const fields of cases) {
        const res = await exchange(fields);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ error: 'invalid_request' });
      }
      const missing = await postForm(t, TOKEN, { grant_type: EXCHANGE, subject_token: subject }, mcpAuth());
      expect(missing.json()).toMatchObject({ error: 'invalid_request', error_description: 'subject_token_type is required' });
      const noToken = await postForm(t, TOKEN, { grant_type: EXCHANGE, subject_token_type: ACCESS_TOKEN }, mcpAuth());
      expect(noToken.json()).toMatchObject({ error: 'invalid_request', error_description: 'subject_token is required' });
      expect(await countAccessTokens()).toBe(before);
    });

    it('a resource server that delegates nothing cannot exchange: invalid_scope', async () => {
      const subject = (await subjectFor(PLAIN, 'plain'))['access_token'] as string;
      const res = await exchange({ subject_token: subject });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_scope' });
    });
  });

  describe('revocation', () => {
    it('revoking the subject token ends its authorization, and the exchanged token with it', async () => {
      const subject = (await subjectFor(MCP, 'notes:read'))['access_token'] as string;
      const issued = ((await exchange({ subject_token: subject })).json() as { access_token: string }).access_token;
      expect((await getWithBearer(t, '/api/v1/users/@me', issued)).statusCode).toBe(200);
      const revoked = await postForm(t, '/api/oauth2/token/revoke', { token: subject, client_id: agentClient.clientId });
      expect(revoked.statusCode).toBe(200);
      expect((await getWithBearer(t, '/api/v1/users/@me', issued)).statusCode).toBe(401);
      expect((await exchange({ subject_token: subject })).json()).toMatchObject({ error: 'invalid_grant' });
    });

    it('deauthorizing the app in Settings → Authorized apps ends the exchanged token too', async () => {
      const subject = (await subjectFor(MCP, 'notes:read'))['access_token'] as string;
      const issued = ((await exchange({ subject_token: subject })).json() as { access_token: string }).access_token;
      const path = `/settings/authorized-apps/${agentClient.clientId}/deauthorize`;
      const done = await agent.submit(path, path, {});
      expect(done.statusCode).toBe(303);
      expect((await getWithBearer(t, '/api/v1/users/@me', issued)).statusCode).toBe(401);
    });
  });
});
