import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { sessionCookie } from '../support/consent-browser.js';
import { createClient, createPerson } from '../support/oauth-factory.js';
import { csrfTokenIn } from '../support/page-agent.js';
import { freePort } from '../support/ports.js';

/**
 * Issue #41 §2: unmodified openid-client 6 runs the device flow against a listening server —
 * initiateDeviceAuthorization, the person approving on /activate (its pages, over fetch, as a
 * browser posts them), pollDeviceAuthorizationGrant validating the ID token.
 */
describe('openid-client signs a device in through Gatehouse (RFC 8628)', () => {
  let t: TestApp;
  let baseUrl: string;
  let person: Person;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { GATEHOUSE_BASE_URL: baseUrl } });
    // The library checks the ID token's exp and iat against its own clock.
    t.clock.set(Date.now());
    await t.app.listen({ port, host: '127.0.0.1' });
    person = await createPerson(t, { username: 'dana', name: 'Dana' });
  });
  afterAll(async () => t.close());

  /** The person's browser: opens verification_uri_complete, and answers the consent screen. */
  async function approve(verificationUri: string, cookie: string, decision: 'authorize' | 'cancel'): Promise<string> {
    const page = await fetch(verificationUri, { headers: { cookie }, redirect: 'manual' });
    const markup = await page.text();
    expect(page.status, markup.slice(0, 300)).toBe(200);
    expect(markup).toContain('A device is asking');
    const start = markup.indexOf('<form method="post" action="/activate">');
    const form = markup.slice(start, markup.indexOf('</form>', start));
    const body = new URLSearchParams();
    for (const [, name, value] of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) body.append(name as string, value as string);
    expect(csrfTokenIn(form)).toBeDefined();
    body.append('decision', decision);
    const answer = await fetch(new URL('/activate', baseUrl), {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: new URL(baseUrl).origin },
      body,
    });
    expect(answer.status).toBe(200);
    return answer.text();
  }

  it('initiateDeviceAuthorization, the person approves on /activate, pollDeviceAuthorizationGrant gets validated tokens for that person', async () => {
    const app = await createClient(t, { owner: person, confidential: false, redirectUris: ['http://127.0.0.1/callback'] });
    const config = await client.discovery(new URL(baseUrl), app.clientId, {}, client.None(), { execute: [client.allowInsecureRequests] });
    expect(config.serverMetadata().device_authorization_endpoint).toBe(`${baseUrl}/api/oauth2/device/authorize`);
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid identify' });
    expect(started.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
    expect(started.verification_uri).toBe(`${baseUrl}/activate`);

    const cookie = await sessionCookie(t, person.id, 'device test');
    expect(await approve(started.verification_uri_complete as string, cookie, 'authorize')).toContain('is connected');

    // The library waits `interval` seconds before its first poll.
    const tokens = await client.pollDeviceAuthorizationGrant(config, started);
    expect(tokens.access_token).toMatch(/^ghat_/);
    expect(tokens.refresh_token).toMatch(/^ghrt_/);
    expect(tokens.claims()).toMatchObject({ iss: baseUrl, sub: person.id, aud: app.clientId });
    const info = await client.fetchUserInfo(config, tokens.access_token, person.id);
    expect(info).toMatchObject({ sub: person.id, preferred_username: 'dana' });
  });

  it('a person who cancels: the library rejects with access_denied', async () => {
    const app = await createClient(t, { owner: person, confidential: false, redirectUris: ['http://127.0.0.1/callback'] });
    const config = await client.discovery(new URL(baseUrl), app.clientId, {}, client.None(), { execute: [client.allowInsecureRequests] });
    const started = await client.initiateDeviceAuthorization(config, { scope: 'identify' });
    await approve(started.verification_uri_complete as string, await sessionCookie(t, person.id, 'device test'), 'cancel');
    await expect(client.pollDeviceAuthorizationGrant(config, started)).rejects.toMatchObject({ error: 'access_denied' });
  });
});
