import { decodeProtectedHeader } from 'jose';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Application } from '../../src/modules/applications/applications.js';
import type { Person } from '../../src/modules/directory/people.js';
import { openIdClientSettings, updateOpenIdClientSettings } from '../../src/modules/oidc/oidc.service.js';
import { up as keepEs256 } from '../../src/storage/migrations/2026-11-27-40-oidc-keep-es256.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { postForm } from '../support/oauth-factory.js';
import type { PageAgent } from '../support/page-agent.js';
import { answerConsent, authorizePath, createApp, freshPkce, location, requestFor, signedIn } from './authorize.fixtures.js';
import { operatorActing } from '../support/acting.js';

/**
 * Issue #36 §6: RS256 becomes the default ID-token algorithm. The upgrade keeps ES256 for every
 * app whose relying party has already received ID tokens and that never saved a choice; apps
 * that never had an ID token, and apps with a saved choice, are left to the default or the choice.
 */
describe('the RS256 default and apps that already received ES256 ID tokens', () => {
  let t: TestApp;
  let owner: Person;

  beforeAll(async () => {
    t = await createTestApp();
    ({ person: owner } = await signedIn(t, 'alg_owner'));
  });
  afterAll(async () => t.close());

  async function idTokenAlg(agent: PageAgent, app: Application): Promise<string> {
    const pkce = freshPkce();
    const path = authorizePath(requestFor(app, { scope: 'openid', code_challenge: pkce.challenge }));
    const first = await agent.get(path);
    const res = first.statusCode === 200 ? await answerConsent(agent, path, 'authorize') : first;
    const code = location(res).searchParams.get('code') as string;
    const tokens = await postForm(t, '/api/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: app.redirectUris[0] as string, client_id: app.id, code_verifier: pkce.verifier });
    return decodeProtectedHeader((tokens.json() as { id_token: string }).id_token).alg as string;
  }

  it('the upgrade pins ES256 only for apps that were issued ID tokens without a saved choice', async () => {
    const { agent } = await signedIn(t);
    const { app: used } = await createApp(t, owner, { name: 'Used', redirectUris: ['https://used.example/cb'] });
    const { app: unused } = await createApp(t, owner, { name: 'Unused', redirectUris: ['https://unused.example/cb'] });
    const { app: chose } = await createApp(t, owner, { name: 'Chose', redirectUris: ['https://chose.example/cb'] });
    await idTokenAlg(agent, used);
    await updateOpenIdClientSettings(t.services, operatorActing(), chose.id, { idTokenAlg: 'RS256' });
    await idTokenAlg(agent, chose);
    // An OAuth-only grant (no openid) is no ID token.
    const pkce = freshPkce();
    await answerConsent(agent, authorizePath(requestFor(unused, { scope: 'identify', code_challenge: pkce.challenge })), 'authorize');

    await keepEs256(t.services.db as unknown as Kysely<unknown>);

    expect((await openIdClientSettings(t.services, used.id)).idTokenAlg).toBe('ES256');
    expect(await idTokenAlg(agent, used)).toBe('ES256');
    expect((await openIdClientSettings(t.services, unused.id)).idTokenAlg).toBe('RS256');
    expect(await idTokenAlg(agent, unused)).toBe('RS256');
    expect((await openIdClientSettings(t.services, chose.id)).idTokenAlg).toBe('RS256');
  });
});
