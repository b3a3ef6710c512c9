import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createClient, createPerson } from '../support/oauth-factory.js';
import { browse, sessionCookie as sessionCookieOf } from '../support/consent-browser.js';
import { freePort } from '../support/ports.js';

/**
 * Issue #22 "Done when": a Python relying party on Debian's Authlib (test/e2e/authlib_rp.py) —
 * discovery, nonce, PKCE, the ID token validated by Authlib's JOSE and CodeIDToken against the
 * JWKS (signature, iss, aud, nonce, exp, at_hash), UserInfo; tampered, wrong-audience and expired
 * tokens refused by Authlib.
 */
const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./authlib_rp.py', import.meta.url));
const probe = spawnSync(PYTHON, ['-c', 'import authlib.oidc.core, authlib.jose'], { encoding: 'utf8' });
const missing = probe.status === 0 ? undefined : `Authlib is not available to ${PYTHON} (${(probe.stderr || String(probe.error)).trim().split('\n').pop()}); install Debian's python3-authlib`;
if (missing) console.warn(`skipping the Authlib relying-party test: ${missing}`);

describe.skipIf(missing !== undefined)('a Python relying party on Authlib signs a person in through Gatehouse', () => {
  let t: TestApp;
  let baseUrl: string;
  let person: Person;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { GATEHOUSE_BASE_URL: baseUrl } });
    t.clock.set(Date.now());
    await t.app.listen({ port, host: '127.0.0.1' });
    person = await createPerson(t, { username: 'quinn', name: 'Quinn' });
  });
  afterAll(async () => t.close());

  it('discovery, PKCE and nonce; Authlib validates the ID token against the JWKS and refuses tampered, wrong-audience and expired ones', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://py.example.com/callback'] });
    const cookie = await sessionCookieOf(t, person.id, 'authlib');
    const child = spawn(PYTHON, [SCRIPT, baseUrl, app.clientId, app.clientSecret as string, app.redirectUri], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async () => {
      const line = await lines.next();
      if (line.done) throw new Error(`the Authlib relying party stopped: ${stderr}`);
      return JSON.parse(line.value) as Record<string, unknown>;
    };

    const { authorization_url } = (await next()) as { authorization_url: string };
    const callback = await browse(baseUrl, cookie, new URL(authorization_url));
    child.stdin.write(`${callback.toString()}\n`);
    const result = (await next()) as {
      claims: Record<string, unknown>;
      header: Record<string, unknown>;
      tampered: string | null;
      wrong_audience: string | null;
      expired: string | null;
      wrong_at_hash: string | null;
      userinfo: Record<string, unknown>;
    };

    expect(result.claims).toMatchObject({ iss: baseUrl, aud: app.clientId, sub: person.id, preferred_username: 'quinn', email: 'quinn@example.com' });
    // Authlib checked at_hash against the access token it received; the server's value is the spec's too.
    expect(typeof result.claims['at_hash']).toBe('string');
    // Issue #36 §6: RS256 by default, for an app that chose nothing.
    expect(result.header['alg']).toBe('RS256');
    expect(result.tampered).toMatch(/^BadSignatureError/);
    expect(result.wrong_audience).toMatch(/^InvalidClaimError.*aud/);
    expect(result.expired).toMatch(/^ExpiredTokenError/);
    expect(result.wrong_at_hash).toMatch(/^InvalidClaimError.*at_hash/);
    expect(result.userinfo).toMatchObject({ sub: person.id, name: 'Quinn', email: 'quinn@example.com', email_verified: false });
  });
});
