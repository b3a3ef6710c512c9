import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { Permission } from '../../src/core/permissions.js';
import type { Application } from '../../src/modules/applications/applications.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import { createChannel } from '../../src/modules/directory/channels.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { postForm } from '../support/oauth-factory.js';
import type { PageAgent } from '../support/page-agent.js';
import { authorizePath, consentFields, createApp, freshPkce, ISSUER, location, signedIn } from './authorize.fixtures.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';

/**
 * Issue #23 §1: `webhook.incoming` — the consent screen's channel picker, the code exchange
 * answering the webhook, and everything the code flow already guarantees.
 */

const REDIRECT = 'https://hooks.example/callback';
let t: TestApp;
let app: Application;
let ana: { agent: PageAgent; person: Person };
let bob: { agent: PageAgent; person: Person };
let general: Channel;
let alerts: Channel;
/** A server where ana is a plain member: none of its channels may be offered. */
let elsewhere: Channel;

beforeAll(async () => {
  t = await createTestApp();
  const maker = await signedIn(t, 'hookmaker');
  ({ app } = await createApp(t, maker.person, { name: 'Status Feed', redirectUris: [REDIRECT], iconUrl: 'https://hooks.example/icon.png' }));
  ana = await signedIn(t, 'ana');
  bob = await signedIn(t, 'bob');
  const server = await createServer(t.services, personActingOf(ana.person.id), { name: 'Ops' });
  general = server.channels[0] as Channel;
  alerts = await createChannel(t.services, operatorActing(), server.id, { name: 'alerts' });
  const other = await createServer(t.services, personActingOf(bob.person.id), { name: 'Bobs place' });
  elsewhere = other.channels[0] as Channel;
  const member = await createRole(t.services, operatorActing(), other.id, { name: 'Members', permissions: Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES });
  await addMember(t.services, operatorActing(), other.id, ana.person.id, [member.id]);
});
afterAll(async () => t.close());

function request(overrides: Record<string, string | undefined> = {}) {
  const pkce = freshPkce();
  const path = authorizePath({ response_type: 'code', client_id: app.id, redirect_uri: REDIRECT, scope: 'webhook.incoming identify', state: 'st-1', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...overrides });
  return { path, verifier: pkce.verifier };
}

function channelOptions(body: string): string[] {
  return [...body.matchAll(/<option value="(\d+)">/g)].map((m) => m[1] as string);
}

async function choose(agent: PageAgent, path: string, channelId: string | undefined, decision: 'authorize' | 'cancel' = 'authorize'): Promise<LightMyRequestResponse> {
  const page = await agent.get(path);
  expect(page.statusCode).toBe(200);
  return agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), ...(channelId ? { channel_id: channelId } : {}), decision });
}

async function exchange(code: string, verifier: string) {
  return postForm(t, '/api/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.id, code_verifier: verifier });
}

async function webhookRows(channelId: string) {
  return t.services.db.selectFrom('webhooks').selectAll().where('channel_id', '=', channelId).orderBy('id').execute();
}

describe('webhook.incoming: the consent screen', () => {
  it('shows a channel picker with only the channels where the person holds Manage webhooks and View channel', async () => {
    const page = await ana.agent.get(request().path);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<select id="channel_id" name="channel_id" required');
    expect(page.body).toContain('<optgroup label="Ops">');
    expect(channelOptions(page.body).sort()).toEqual([general.id, alerts.id].sort());
    expect(channelOptions(page.body)).not.toContain(elsewhere.id);
    expect(page.body).toContain('Status Feed wants to post messages in a channel');
  });

  it('prompt=none never skips the screen, even after an earlier authorization', async () => {
    const first = request();
    const res = await choose(ana.agent, first.path, general.id);
    expect(location(res).searchParams.get('code')).toBeTruthy();
    const again = await ana.agent.get(request({ prompt: 'none' }).path);
    expect(again.statusCode).toBe(200);
    expect(again.body).toContain('name="channel_id"');
  });

  it('a person with Manage webhooks nowhere is told so and gets no Authorize button', async () => {
    const carol = await signedIn(t, 'carol');
    const page = await carol.agent.get(request().path);
    expect(page.body).toContain('There is no channel you can add a webhook to');
    expect(page.body).not.toContain('value="authorize"');
  });

  it('keeps the code flow\'s rules: an unregistered redirect URI is an error page, a public app without PKCE is redirected with invalid_request', async () => {
    const wrong = await ana.agent.get(request({ redirect_uri: `${REDIRECT}/other` }).path);
    expect(wrong.statusCode).toBe(400);
    expect(wrong.headers['location']).toBeUndefined();
    const noPkce = await ana.agent.get(request({ code_challenge: undefined, code_challenge_method: undefined }).path);
    expect(location(noPkce).searchParams.get('error')).toBe('invalid_request');
  });

  it('is refused together with bot (invalid_scope, redirected with state and iss)', async () => {
    const res = await ana.agent.get(request({ scope: 'webhook.incoming bot' }).path);
    const where = location(res);
    expect(where.searchParams.get('error')).toBe('invalid_scope');
    expect(where.searchParams.get('state')).toBe('st-1');
    expect(where.searchParams.get('iss')).toBe(ISSUER);
  });
});

describe('webhook.incoming: the decision', () => {
  it('Cancel redirects with access_denied, state and iss, and creates nothing', async () => {
    const before = (await webhookRows(alerts.id)).length;
    const where = location(await choose(ana.agent, request().path, alerts.id, 'cancel'));
    expect(where.origin + where.pathname).toBe(REDIRECT);
    expect(Object.fromEntries(where.searchParams)).toMatchObject({ error: 'access_denied', state: 'st-1', iss: ISSUER });
    expect(await webhookRows(alerts.id)).toHaveLength(before);
  });

  it('Authorize without a channel, or with one the person may not manage, is refused and issues no code', async () => {
    const none = await choose(ana.agent, request().path, undefined);
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('Choose a channel');
    const forged = await choose(ana.agent, request().path, elsewhere.id);
    expect(forged.statusCode).toBe(403);
    expect(forged.headers['location']).toBeUndefined();
  });

  it('Authorize redirects with code, state and iss (303); the webhook does not exist until the code is exchanged', async () => {
    const before = (await webhookRows(alerts.id)).length;
    const res = await choose(ana.agent, request().path, alerts.id);
    expect(res.statusCode).toBe(303);
    const where = location(res);
    expect(where.searchParams.get('state')).toBe('st-1');
    expect(where.searchParams.get('iss')).toBe(ISSUER);
    expect(where.searchParams.get('code')).toMatch(/\S/);
    expect(await webhookRows(alerts.id)).toHaveLength(before);
  });
});

describe('webhook.incoming: the code exchange', () => {
  it('answers the token fields plus webhook (with token and url, shown once), named after the app with its icon and application id', async () => {
    const req = request();
    const code = location(await choose(ana.agent, req.path, alerts.id)).searchParams.get('code') as string;
    const res = await exchange(code, req.verifier);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'identify webhook.incoming' });
    expect(typeof body.access_token).toBe('string');
    expect(typeof body.refresh_token).toBe('string');
    const webhook = body.webhook;
    expect(webhook).toMatchObject({ type: 1, name: 'Status Feed', token: expect.stringMatching(/\S{20,}/) });
    expect(webhook.url).toBe(`${ISSUER}/api/v1/webhooks/${webhook.id}/${webhook.token}`);
    // The channel and application, whatever the presenter names them.
    expect(Object.values(webhook)).toEqual(expect.arrayContaining([alerts.id, app.id, 'https://hooks.example/icon.png']));

    const row = (await webhookRows(alerts.id)).find((r) => String(r.id) === webhook.id);
    expect(row).toMatchObject({ name: 'Status Feed', avatar_url: 'https://hooks.example/icon.png' });
    expect(String(row?.application_id)).toBe(app.id);
    expect(String(row?.creator_id)).toBe(ana.person.id);

    // It works like any webhook.
    const posted = await t.app.inject({ method: 'POST', url: new URL(webhook.url).pathname, payload: { content: 'all green' } });
    expect(posted.statusCode).toBe(204);

    // The code works once; a replay creates nothing more.
    const count = (await webhookRows(alerts.id)).length;
    const replay = await exchange(code, req.verifier);
    expect(replay.statusCode).toBe(400);
    expect(replay.json().error).toBe('invalid_grant');
    expect(await webhookRows(alerts.id)).toHaveLength(count);
  });

  it('creates a new webhook on every authorization', async () => {
    const before = (await webhookRows(general.id)).length;
    for (let i = 0; i < 2; i++) {
      const req = request();
      const code = location(await choose(ana.agent, req.path, general.id)).searchParams.get('code') as string;
      expect((await exchange(code, req.verifier)).statusCode).toBe(200);
    }
    expect(await webhookRows(general.id)).toHaveLength(before + 2);
  });

  it('a full channel (10 webhooks) is a clear error: on the consent screen, and at the exchange, where the code stays unused', async () => {
    const channel = await createChannel(t.services, operatorActing(), general.serverId as string, { name: 'busy' });
    // A code issued while there was room…
    const req = request();
    const code = location(await choose(ana.agent, req.path, channel.id)).searchParams.get('code') as string;
    const made = [];
    for (let i = 0; i < 10; i++) made.push(await createWebhook(t.services, actingOf({ kind: 'person', id: ana.person.id }), channel, { name: `Hook ${i}` }));
    // …cannot create an 11th.
    const full = await exchange(code, req.verifier);
    expect(full.statusCode).toBe(400);
    expect(full.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('10 webhooks') });
    expect(await webhookRows(channel.id)).toHaveLength(10);
    // The consent screen refuses the full channel before issuing a code.
    const refused = await choose(ana.agent, request().path, channel.id);
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('already has 10 webhooks');
    // Room again: the unused code still works.
    await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${made[0]?.webhook.id}/${made[0]?.token}` });
    expect((await exchange(code, req.verifier)).statusCode).toBe(200);
  });

  it('a person who lost Manage webhooks before the exchange gets invalid_grant and no webhook', async () => {
    const server = await createServer(t.services, personActingOf(bob.person.id), { name: 'Temp' });
    const role = await createRole(t.services, operatorActing(), server.id, { name: 'Hooks', permissions: Permission.VIEW_CHANNEL | Permission.MANAGE_WEBHOOKS });
    await addMember(t.services, operatorActing(), server.id, ana.person.id, [role.id]);
    const channel = server.channels[0] as Channel;
    const req = request();
    const code = location(await choose(ana.agent, req.path, channel.id)).searchParams.get('code') as string;
    await t.services.db.deleteFrom('member_roles').where('role_id', '=', role.id).execute();
    const res = await exchange(code, req.verifier);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_grant');
    expect(await webhookRows(channel.id)).toHaveLength(0);
  });
});

describe('webhook.incoming: revocation', () => {
  it('revoking the authorization ends its tokens and keeps the webhook, which still posts and is listed in the channel settings', async () => {
    const req = request();
    const code = location(await choose(ana.agent, req.path, general.id)).searchParams.get('code') as string;
    const tokens = (await exchange(code, req.verifier)).json();
    const revoked = await postForm(t, '/api/oauth2/token/revoke', { token: tokens.access_token, client_id: app.id });
    expect(revoked.statusCode).toBe(200);
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.statusCode).toBe(401);
    const posted = await t.app.inject({ method: 'POST', url: new URL(tokens.webhook.url).pathname, payload: { content: 'still here' } });
    expect(posted.statusCode).toBe(204);
    const settings = await ana.agent.get(`/channels/${general.id}/settings/integrations`);
    expect(settings.statusCode).toBe(200);
    expect(settings.body).toContain(`id="webhook-${tokens.webhook.id}"`);
  });
});
