import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/modules/directory/channels.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createClient, createPerson, type TestClient } from '../support/oauth-factory.js';
import { browse, sessionCookie as sessionCookieOf } from '../support/consent-browser.js';
import { freePort } from '../support/ports.js';
import { personActingOf } from '../support/acting.js';

/**
 * Issue #23 "Done when": `webhook.incoming` end to end with a standards OAuth client
 * (oauth4webapi, unmodified) against a listening server: discovery, the consent screen's channel
 * picker, the code exchange answering `webhook`, executing on it, and revocation.
 */

interface WebhookAnswer {
  id: string;
  type: number;
  name: string;
  token: string;
  url: string;
}

let t: TestApp;
let baseUrl: string;
let sessionCookie: string;
let channel: Channel;
let as: oauth.AuthorizationServer;
const insecure = { [oauth.allowInsecureRequests]: true } as const;

beforeAll(async () => {
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  t = await createTestApp({ env: { GATEHOUSE_BASE_URL: baseUrl } });
  await t.app.listen({ port, host: '127.0.0.1' });
  const person = await createPerson(t, { username: 'wendy', name: 'Wendy' });
  sessionCookie = await sessionCookieOf(t, person.id, 'webhook.incoming e2e');
  const server = await createServer(t.services, personActingOf(person.id), { name: 'Deploys' });
  channel = server.channels[0] as Channel;
  const issuer = new URL(baseUrl);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
});
afterAll(async () => t.close());

/** The person's browser: opens the consent screen, picks `channelId` in the picker, presses Authorize. */
function consentWithChannel(authorizationUrl: URL, channelId: string): Promise<URL> {
  return browse(baseUrl, sessionCookie, authorizationUrl, {
    // The picker offers this channel.
    inspect: (form) => expect(form).toContain(`<option value="${channelId}">`),
    choose: { channel_id: channelId },
  });
}

async function authorize(app: TestClient, clientAuth: oauth.ClientAuth) {
  const client: oauth.Client = { client_id: app.clientId };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint as string);
  url.searchParams.set('client_id', app.clientId);
  url.searchParams.set('redirect_uri', app.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', 'webhook.incoming');
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  const callback = await consentWithChannel(url, channel.id);
  // oauth4webapi checks state and iss (RFC 9207) here.
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, app.redirectUri, verifier, insecure);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  return { client, tokens };
}

describe('webhook.incoming with oauth4webapi', () => {
  it('consent with the channel picker, code exchange returning webhook, executing on it, revocation', async () => {
    const owner = await createPerson(t, { username: 'maker' });
    const app = await createClient(t, { owner, confidential: true, redirectUris: ['http://127.0.0.1/callback'], name: 'Deploy Bot' });
    const clientAuth = oauth.ClientSecretPost(app.clientSecret as string);
    const { client, tokens } = await authorize(app, clientAuth);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('webhook.incoming');

    // oauth4webapi hands back every extra field of the token response as is.
    const webhook = tokens['webhook'] as unknown as WebhookAnswer;
    expect(webhook).toMatchObject({ type: 1, name: 'Deploy Bot' });
    expect(webhook.url).toBe(`${baseUrl}/api/v1/webhooks/${webhook.id}/${webhook.token}`);
    expect(Object.values(webhook)).toEqual(expect.arrayContaining([channel.id, app.clientId]));

    const posted = await fetch(`${webhook.url}?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'deployed v3' }) });
    expect(posted.status).toBe(200);
    const message = (await posted.json()) as Record<string, unknown>;
    expect(message['content']).toBe('deployed v3');
    expect(Object.values(message)).toContain(webhook.id);

    const revoked = await oauth.revocationRequest(as, client, clientAuth, tokens.access_token, insecure);
    await oauth.processRevocationResponse(revoked);
    // The revoked token is refused with a Bearer challenge (401 invalid_token), which oauth4webapi raises.
    await expect(oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL('/api/v1/oauth2/@me', baseUrl), new Headers(), null, insecure)).rejects.toBeInstanceOf(
      oauth.WWWAuthenticateChallengeError,
    );
    // Revoking the app's access keeps the webhook (docs/oauth.md): it still posts.
    const after = await fetch(webhook.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'still posting' }) });
    expect(after.status).toBe(204);
  });
});
