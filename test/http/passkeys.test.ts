import { createHash, createSign, generateKeyPairSync, randomBytes } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE } from '../../src/core/clock.js';
import { beginPendingSignIn, sessionMethods } from '../../src/modules/mfa/mfa.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';
import { createClient, getWithBearer, obtainTokens } from '../support/oauth-factory.js';
import { getPersonById } from '../../src/modules/directory/people.service.js';
import { hasSecondFactor, resetSecondFactors } from '../../src/modules/mfa/mfa.service.js';
import { operatorActing } from '../support/acting.js';
import { disablePerson } from '../../src/modules/accounts/people-admin.service.js';
import { beginPasskeySignIn, PASSKEY_OPTIONS_RULE } from '../../src/modules/accounts/passkeys.service.js';
import { RateLimitedError } from '../../src/core/errors.js';

const PASSWORD = 'correct horse battery';
const ORIGIN = 'http://localhost:8080';

const b64 = (bytes: Uint8Array | Buffer): string => Buffer.from(bytes).toString('base64url');

/**
 * A software authenticator (ES256, "none" attestation), so the HTTP tests can craft what a browser
 * sends: a real one is driven in test/browser/passkeys.test.ts.
 */
class SoftAuthenticator {
  readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  readonly credentialId = randomBytes(16);
  counter = 0;
  userHandle = '';

  private authData(rpId: string, flags: number, attested?: Buffer): Buffer {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    return Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([flags]), counter, attested ?? Buffer.alloc(0)]);
  }

  register(options: { challenge: string; rp: { id: string }; user: { id: string } }, origin = ORIGIN): string {
    this.userHandle = options.user.id;
    const jwk = this.keys.publicKey.export({ format: 'jwk' });
    const cose = isoCBOR.encode(new Map<number, number | Uint8Array>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x ?? '', 'base64url')], [-3, Buffer.from(jwk.y ?? '', 'base64url')]]));
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, this.credentialId, Buffer.from(cose)]);
    const authData = this.authData(options.rp.id, 0x01 | 0x04 | 0x40, attested);
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]) as never);
    const clientData = JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false });
    return JSON.stringify({
      id: b64(this.credentialId),
      rawId: b64(this.credentialId),
      type: 'public-key',
      response: { clientDataJSON: b64(Buffer.from(clientData)), attestationObject: b64(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
    });
  }

  assert(options: { challenge: string; rpId: string }, overrides: { origin?: string; userHandle?: string; counter?: number } = {}): string {
    this.counter = overrides.counter ?? this.counter + 1;
    const authData = this.authData(options.rpId, 0x01 | 0x04);
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: overrides.origin ?? ORIGIN, crossOrigin: false }));
    const signer = createSign('SHA256');
    signer.update(Buffer.concat([authData, createHash('sha256').update(clientData).digest()]));
    return JSON.stringify({
      id: b64(this.credentialId),
      rawId: b64(this.credentialId),
      type: 'public-key',
      response: { clientDataJSON: b64(clientData), authenticatorData: b64(authData), signature: b64(signer.sign(this.keys.privateKey)), userHandle: overrides.userHandle ?? this.userHandle },
      clientExtensionResults: {},
    });
  }
}

describe('Passkeys (issue #38 §4)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  let counter = 0;
  const fresh = () => `pk${++counter}x${t.services.ids.next().slice(-6)}`;

  async function register(username: string): Promise<PageAgent> {
    const agent = new PageAgent(t.app);
    const res = await agent.submit('/register', '/register', { username, name: '', email: '', password: PASSWORD });
    expect(res.statusCode, res.body).toBe(303);
    return agent;
  }

  async function options<T>(agent: PageAgent, pageUrl: string, url: string): Promise<T> {
    const page = await agent.get(pageUrl);
    const res = await agent.postRaw(url, { _csrf: csrfTokenIn(page.body) ?? '' });
    expect(res.statusCode, res.body).toBe(200);
    return JSON.parse(res.body) as T;
  }

  /** Adds a passkey; the recovery codes shown when it is the person's first second factor (else none). */
  async function addPasskey(agent: PageAgent, authenticator: SoftAuthenticator, name = 'Laptop'): Promise<string[]> {
    const creation = await options<{ challenge: string; rp: { id: string }; user: { id: string } }>(agent, '/settings/security', '/settings/security/passkeys/options');
    const res = await agent.submit('/settings/security', '/settings/security/passkeys', { name, credential: authenticator.register(creation) });
    if (res.statusCode === 303) return [];
    expect(res.statusCode, res.body).toBe(200);
    return [...res.body.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1] ?? '');
  }

  async function passkeySignIn(credentialFor: (o: { challenge: string; rpId: string }) => string): Promise<{ agent: PageAgent; status: number; body: string }> {
    const agent = new PageAgent(t.app);
    const request = await options<{ challenge: string; rpId: string }>(agent, '/login', '/login/passkey/options');
    const res = await agent.submit('/login', '/login/passkey', { credential: credentialFor(request), next: '/settings/profile' });
    return { agent, status: res.statusCode, body: res.body };
  }

  async function actions(username: string): Promise<Array<{ action: string; options: string | null }>> {
    const user = await t.services.db.selectFrom('users').select('id').where('username_key', '=', username).executeTakeFirstOrThrow();
    const rows = await t.services.db.selectFrom('audit_events').select(['action', 'options']).where('subject_user_id', '=', String(user.id)).orderBy('id').execute();
    return rows.map((r) => ({ action: r.action, options: r.options === null ? null : String(r.options) }));
  }

  it('asks for a discoverable, user-verified passkey for this site, named after the base URL', async () => {
    const agent = await register(fresh());
    const creation = await options<{ rp: { id: string }; authenticatorSelection: { residentKey: string; userVerification: string } }>(agent, '/settings/security', '/settings/security/passkeys/options');
    expect(creation.rp.id).toBe('localhost');
    expect(creation.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
  });

  it('registers a named passkey, lists it on Settings → Security, and records passkey.added', async () => {
    const username = fresh();
    const agent = await register(username);
    await addPasskey(agent, new SoftAuthenticator(), 'Work laptop');
    const page = await agent.get('/settings/security');
    expect(page.body).toContain('Work laptop');
    expect(page.body).toContain('never used');
    expect(page.body).toContain('A passkey was added (Work laptop)');
    expect((await actions(username)).map((a) => a.action)).toContain('passkey.added');
  });

  it('signs in with a passkey and no password, recorded as a sign-in with a passkey', async () => {
    const username = fresh();
    const owner = await register(username);
    const authenticator = new SoftAuthenticator();
    await addPasskey(owner, authenticator);
    const signIn = await passkeySignIn((o) => authenticator.assert(o));
    expect(signIn.status, signIn.body).toBe(303);
    const profile = await signIn.agent.get('/settings/profile');
    expect(profile.statusCode).toBe(200);
    expect(profile.body).toContain(`@${username}`);
    const succeeded = (await actions(username)).filter((a) => a.action === 'signin.succeeded');
    expect(succeeded.at(-1)?.options).toContain('passkey');
    const token = signIn.agent.cookies.get('gh_session') ?? '';
    expect(await sessionMethods(t.services, token)).toEqual(['hwk', 'mfa']);
    expect((await signIn.agent.get('/settings/security')).body).toContain('last used');
  });

  it("refuses a disabled person's passkey sign-in with the disabled page (403), starting no session (issue #39)", async () => {
    const username = fresh();
    const owner = await register(username);
    const authenticator = new SoftAuthenticator();
    await addPasskey(owner, authenticator);
    const person = await t.services.db.selectFrom('users').select('id').where('username_key', '=', username).executeTakeFirstOrThrow();
    await disablePerson(t.services, operatorActing(), String(person.id), 'spam');
    const signIn = await passkeySignIn((o) => authenticator.assert(o));
    expect(signIn.status).toBe(403);
    expect(signIn.body).toContain('has been disabled by the operator');
    expect(signIn.agent.cookies.has('gh_session')).toBe(false);
    expect((await actions(username)).filter((a) => a.action === 'signin.succeeded')).toHaveLength(0);
  });

  it('refuses a replayed assertion: the challenge works once', async () => {
    const owner = await register(fresh());
    const authenticator = new SoftAuthenticator();
    await addPasskey(owner, authenticator);
    let sent = '';
    const first = await passkeySignIn((o) => (sent = authenticator.assert(o)));
    expect(first.status).toBe(303);
    const replay = await passkeySignIn(() => sent);
    expect(replay.status).toBe(400);
    expect(replay.body).toContain('This passkey could not be used to sign in here');
    expect((await replay.agent.get('/settings/profile')).statusCode).not.toBe(200);
  });

  it('refuses an assertion made for another origin', async () => {
    const owner = await register(fresh());
    const authenticator = new SoftAuthenticator();
    await addPasskey(owner, authenticator);
    const refused = await passkeySignIn((o) => authenticator.assert(o, { origin: 'https://gatehouse.example.net' }));
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('This passkey could not be used to sign in here');
  });

  it("refuses a passkey whose user handle names another account", async () => {
    const victim = await register(fresh());
    await addPasskey(victim, new SoftAuthenticator());
    const victimHandle = (await options<{ user: { id: string } }>(victim, '/settings/security', '/settings/security/passkeys/options')).user.id;
    const attacker = await register(fresh());
    const authenticator = new SoftAuthenticator();
    await addPasskey(attacker, authenticator);
    const refused = await passkeySignIn((o) => authenticator.assert(o, { userHandle: victimHandle }));
    expect(refused.status).toBe(400);
    expect((await refused.agent.get('/settings/profile')).statusCode).not.toBe(200);
  });

  it('refuses a signature counter that does not move forward (a cloned authenticator)', async () => {
    const owner = await register(fresh());
    const authenticator = new SoftAuthenticator();
    await addPasskey(owner, authenticator);
    expect((await passkeySignIn((o) => authenticator.assert(o, { counter: 5 }))).status).toBe(303);
    const clone = await passkeySignIn((o) => authenticator.assert(o, { counter: 5 }));
    expect(clone.status).toBe(400);
  });

  it('refuses a registration whose challenge has expired, and adds nothing', async () => {
    const username = fresh();
    const agent = await register(username);
    const creation = await options<{ challenge: string; rp: { id: string }; user: { id: string } }>(agent, '/settings/security', '/settings/security/passkeys/options');
    t.clock.advance(6 * MINUTE);
    const res = await agent.submit('/settings/security', '/settings/security/passkeys', { name: 'Late', credential: new SoftAuthenticator().register(creation) });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('expired, already used or made for another site');
    expect((await actions(username)).map((a) => a.action)).not.toContain('passkey.added');
  });

  it('refuses an unreadable credential and a missing name beside the form, never with a 5xx', async () => {
    const agent = await register(fresh());
    const garbage = await agent.submit('/settings/security', '/settings/security/passkeys', { name: 'X', credential: '{not json' });
    expect(garbage.statusCode).toBe(400);
    expect(garbage.body).toContain('The passkey response could not be read');
    const unnamed = await agent.submit('/settings/security', '/settings/security/passkeys', { name: ' ', credential: '{}' });
    expect(unnamed.statusCode).toBe(400);
    expect(unnamed.body).toContain('Give the passkey a name');
    const signIn = new PageAgent(t.app);
    const res = await signIn.submit('/login', '/login/passkey', { credential: '[]' });
    expect(res.statusCode).toBe(400);
  });

  it('removes a passkey only with the password, and records passkey.removed', async () => {
    const username = fresh();
    const agent = await register(username);
    const authenticator = new SoftAuthenticator();
    await addPasskey(agent, authenticator, 'Phone');
    const passkey = b64(authenticator.credentialId);
    const wrong = await agent.submit('/settings/security', '/settings/security/passkeys/remove', { passkey, password: 'not my password' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('Your password is incorrect. The passkey was not removed.');
    expect((await agent.get('/settings/security')).body).toContain('Phone');
    const removed = await agent.submit('/settings/security', '/settings/security/passkeys/remove', { passkey, password: PASSWORD });
    expect(removed.statusCode).toBe(303);
    expect((await agent.get('/settings/security')).body).toContain('No passkeys yet');
    expect((await actions(username)).map((a) => a.action)).toContain('passkey.removed');
    expect((await passkeySignIn((o) => authenticator.assert(o))).status).toBe(400);
  });

  /** A browser that has given the right password and waits at the second step (as accounts.routes does for a person with a second factor). */
  async function atSecondStep(username: string): Promise<PageAgent> {
    const user = await t.services.db.selectFrom('users').select('id').where('username_key', '=', username).executeTakeFirstOrThrow();
    const pending = await beginPendingSignIn(t.services, String(user.id), null);
    const agent = new PageAgent(t.app);
    agent.cookies.set('gh_pending', pending.token);
    return agent;
  }

  it('takes a passkey as the second factor after the password: amr pwd, hwk and mfa', async () => {
    const username = fresh();
    const owner = await register(username);
    const authenticator = new SoftAuthenticator();
    await addPasskey(owner, authenticator);
    const agent = await atSecondStep(username);
    const request = await options<{ challenge: string; rpId: string; allowCredentials: Array<{ id: string }> }>(agent, '/login/second-factor', '/login/second-factor/passkey/options');
    expect(request.allowCredentials.map((c) => c.id)).toEqual([b64(authenticator.credentialId)]);
    const res = await agent.submit('/login/second-factor', '/login/second-factor/passkey', { credential: authenticator.assert(request), next: '/settings/profile' });
    expect(res.statusCode, res.body).toBe(303);
    expect(await sessionMethods(t.services, agent.cookies.get('gh_session') ?? '')).toEqual(['pwd', 'hwk', 'mfa']);
  });

  it('ends at the second step a sign-in whose account was disabled after its password (403, no session; issue #39)', async () => {
    const username = fresh();
    const owner = await register(username);
    const authenticator = new SoftAuthenticator();
    await addPasskey(owner, authenticator);
    const agent = await atSecondStep(username);
    const person = await t.services.db.selectFrom('users').select('id').where('username_key', '=', username).executeTakeFirstOrThrow();
    await disablePerson(t.services, operatorActing(), String(person.id), null);
    const request = await options<{ challenge: string; rpId: string }>(agent, '/login/second-factor', '/login/second-factor/passkey/options');
    const res = await agent.submit('/login/second-factor', '/login/second-factor/passkey', { credential: authenticator.assert(request) });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('has been disabled by the operator');
    expect(agent.cookies.has('gh_session')).toBe(false);
  });

  it("refuses another account's passkey at the second step, and starts no session", async () => {
    const username = fresh();
    await addPasskey(await register(username), new SoftAuthenticator());
    const other = await register(fresh());
    const othersKey = new SoftAuthenticator();
    await addPasskey(other, othersKey);
    const agent = await atSecondStep(username);
    const request = await options<{ challenge: string; rpId: string }>(agent, '/login/second-factor', '/login/second-factor/passkey/options');
    const res = await agent.submit('/login/second-factor', '/login/second-factor/passkey', { credential: othersKey.assert(request) });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('This passkey could not be used to sign in here');
    expect(agent.cookies.has('gh_session')).toBe(false);
  });

  describe('a passkey is a second factor (issue #38 §4)', () => {
    async function passwordSignIn(username: string): Promise<{ agent: PageAgent; location: string }> {
      const agent = new PageAgent(t.app);
      const res = await agent.submit('/login', '/login', { username, password: PASSWORD, next: '/settings/profile' });
      expect(res.statusCode, res.body).toBe(303);
      return { agent, location: String(res.headers.location) };
    }

    it('the first passkey shows ten recovery codes once; a second passkey shows none', async () => {
      const agent = await register(fresh());
      const codes = await addPasskey(agent, new SoftAuthenticator());
      expect(codes).toHaveLength(10);
      expect(new Set(codes).size).toBe(10);
      expect(await addPasskey(agent, new SoftAuthenticator(), 'Phone')).toEqual([]);
      const security = await agent.get('/settings/security');
      expect(security.body).toContain('On: signing in asks for one of your passkeys after your password. 10 unused recovery codes left.');
    });

    it('after the password, a person whose only second factor is a passkey is asked for it, and the passkey completes the sign-in', async () => {
      const username = fresh();
      const authenticator = new SoftAuthenticator();
      await addPasskey(await register(username), authenticator);
      const { agent, location } = await passwordSignIn(username);
      expect(location).toBe(`/login/second-factor?next=${encodeURIComponent('/settings/profile')}`);
      expect(agent.cookies.has('gh_session')).toBe(false);
      const step = await agent.get(location);
      expect(step.body).toContain('Use one of your passkeys, or enter one of your recovery codes.');
      expect(step.body).toContain('action="/login/second-factor/passkey"');
      expect(step.body).toContain('Recovery code');
      const request = await options<{ challenge: string; rpId: string }>(agent, location, '/login/second-factor/passkey/options');
      const res = await agent.submit(location, '/login/second-factor/passkey', { credential: authenticator.assert(request), next: '/settings/profile' });
      expect(res.statusCode, res.body).toBe(303);
      expect(await sessionMethods(t.services, agent.cookies.get('gh_session') ?? '')).toEqual(['pwd', 'hwk', 'mfa']);
    });

    it('a recovery code made with the first passkey completes the second step once', async () => {
      const username = fresh();
      const codes = await addPasskey(await register(username), new SoftAuthenticator());
      const { agent, location } = await passwordSignIn(username);
      const res = await agent.submit(location, '/login/second-factor', { code: codes[0] ?? '', next: '/settings/profile' });
      expect(res.statusCode, res.body).toBe(303);
      expect(await sessionMethods(t.services, agent.cookies.get('gh_session') ?? '')).toEqual(['pwd', 'otp', 'mfa']);
      const again = await passwordSignIn(username);
      expect((await again.agent.submit(again.location, '/login/second-factor', { code: codes[0] ?? '' })).statusCode).toBe(400);
    });

    it("/users/@me says mfa_enabled: true once a passkey is registered, false after it is removed and after the operator's reset-mfa", async () => {
      const username = fresh();
      const agent = await register(username);
      const user = await t.services.db.selectFrom('users').select('id').where('username_key', '=', username).executeTakeFirstOrThrow();
      const person = (await getPersonById(t.services, String(user.id)))!;
      const client = await createClient(t, { owner: person, confidential: false, name: `App of ${username}` });
      const me = async () => (await getWithBearer(t, '/api/v1/users/@me', (await obtainTokens(t, client, person, ['identify'])).access_token)).json() as { mfa_enabled?: boolean };
      expect((await me()).mfa_enabled).toBe(false);
      const authenticator = new SoftAuthenticator();
      await addPasskey(agent, authenticator);
      expect((await me()).mfa_enabled).toBe(true);
      expect(await hasSecondFactor(t.services, person.id)).toBe(true);
      await agent.submit('/settings/security', '/settings/security/passkeys/remove', { passkey: b64(authenticator.credentialId), password: PASSWORD });
      expect((await me()).mfa_enabled).toBe(false);
      await addPasskey(agent, new SoftAuthenticator(), 'Phone');
      expect((await me()).mfa_enabled).toBe(true);
      await resetSecondFactors(t.services, operatorActing(), username);
      expect((await me()).mfa_enabled).toBe(false);
      expect(await hasSecondFactor(t.services, person.id)).toBe(false);
    });

    it('removing the last passkey ends the second step and the recovery codes', async () => {
      const username = fresh();
      const agent = await register(username);
      const authenticator = new SoftAuthenticator();
      expect(await addPasskey(agent, authenticator)).toHaveLength(10);
      const removed = await agent.submit('/settings/security', '/settings/security/passkeys/remove', { passkey: b64(authenticator.credentialId), password: PASSWORD });
      expect(removed.statusCode).toBe(303);
      const user = await t.services.db.selectFrom('users').select('id').where('username_key', '=', username).executeTakeFirstOrThrow();
      const codes = await t.services.db.selectFrom('mfa_recovery_codes').select('code_hash').where('user_id', '=', String(user.id)).execute();
      expect(codes).toEqual([]);
      expect((await passwordSignIn(username)).location).toBe('/settings/profile');
      expect((await agent.get('/settings/security')).body).toContain('Off. Set up an authenticator app, or add a passkey below');
    });
  });

  describe('Delete account with a passkey as the second factor (issue #38 §5)', () => {
    async function deletionAssertion(agent: PageAgent, authenticator: SoftAuthenticator, overrides: { origin?: string } = {}): Promise<string> {
      const request = await options<{ challenge: string; rpId: string; allowCredentials: Array<{ id: string }> }>(agent, '/settings/account', '/settings/account/delete/passkey/options');
      expect(request.allowCredentials.map((c) => c.id)).toEqual([b64(authenticator.credentialId)]);
      return authenticator.assert(request, overrides);
    }

    it('offers the passkey on the form, and deletes the account with the password and a passkey assertion', async () => {
      const username = fresh();
      const agent = await register(username);
      const authenticator = new SoftAuthenticator();
      await addPasskey(agent, authenticator);
      const user = await t.services.db.selectFrom('users').select('id').where('username_key', '=', username).executeTakeFirstOrThrow();
      const page = await agent.get('/settings/account');
      expect(page.body).toContain('Delete with a passkey');
      expect(page.body).toContain('data-options="/settings/account/delete/passkey/options"');
      const res = await agent.submit('/settings/account', '/settings/account/delete', { password: PASSWORD, credential: await deletionAssertion(agent, authenticator) });
      expect(res.statusCode, res.body).toBe(303);
      expect(res.headers.location).toBe('/?account=deleted');
      const deleted = await t.services.db.selectFrom('audit_events').select('action').where('subject_user_id', '=', String(user.id)).where('action', '=', 'account.deleted').execute();
      expect(deleted).toHaveLength(1);
      expect(await t.services.db.selectFrom('passkeys').select('credential_id').where('user_id', '=', String(user.id)).execute()).toEqual([]);
    });

    it('refuses the password alone, a wrong password with a passkey, and an assertion for another origin, deleting nothing', async () => {
      const username = fresh();
      const agent = await register(username);
      const authenticator = new SoftAuthenticator();
      await addPasskey(agent, authenticator);
      const alone = await agent.submit('/settings/account', '/settings/account/delete', { password: PASSWORD });
      expect(alone.statusCode).toBe(400);
      const wrongPassword = await agent.submit('/settings/account', '/settings/account/delete', { password: 'not my password', credential: await deletionAssertion(agent, authenticator) });
      expect(wrongPassword.statusCode).toBe(400);
      expect(wrongPassword.body).toContain('Password does not match.');
      const elsewhere = await agent.submit('/settings/account', '/settings/account/delete', { password: PASSWORD, credential: await deletionAssertion(agent, authenticator, { origin: 'https://gatehouse.example.net' }) });
      expect(elsewhere.statusCode).toBe(400);
      expect(elsewhere.body).toContain('This passkey could not be used');
      expect((await agent.get('/settings/profile')).statusCode).toBe(200);
      expect((await actions(username)).map((a) => a.action)).not.toContain('account.deleted');
    });

    it('refuses a sign-in assertion: its challenge was not issued to confirm a deletion', async () => {
      const agent = await register(fresh());
      const authenticator = new SoftAuthenticator();
      await addPasskey(agent, authenticator);
      const signInOptions = await options<{ challenge: string; rpId: string }>(new PageAgent(t.app), '/login', '/login/passkey/options');
      const res = await agent.submit('/settings/account', '/settings/account/delete', { password: PASSWORD, credential: authenticator.assert(signInOptions) });
      expect(res.statusCode).toBe(400);
      expect((await agent.get('/settings/profile')).statusCode).toBe(200);
    });
  });

  describe('throttled like passwords (issue #38 §4)', () => {
    it('an address gets 30 passwordless sign-ins started per 15 minutes; another address is not held up', async () => {
      for (let i = 0; i < PASSKEY_OPTIONS_RULE.limit; i += 1) await beginPasskeySignIn(t.services, '198.51.100.9');
      await expect(beginPasskeySignIn(t.services, '198.51.100.9')).rejects.toBeInstanceOf(RateLimitedError);
      await expect(beginPasskeySignIn(t.services, '198.51.100.10')).resolves.toHaveProperty('challenge');
      t.clock.advance(PASSKEY_OPTIONS_RULE.windowMs + MINUTE);
      await expect(beginPasskeySignIn(t.services, '198.51.100.9')).resolves.toHaveProperty('challenge');
    });

    it("refused passkey sign-ins count against the person's username and the address: after five, even the right passkey waits (429)", async () => {
      t.clock.advance(16 * MINUTE);
      const owner = await register(fresh());
      const authenticator = new SoftAuthenticator();
      await addPasskey(owner, authenticator);
      for (let i = 0; i < 5; i += 1) {
        const refused = await passkeySignIn((o) => authenticator.assert(o, { origin: 'https://gatehouse.example.net' }));
        expect(refused.status).toBe(400);
      }
      const held = await passkeySignIn((o) => authenticator.assert(o));
      expect(held.status).toBe(429);
      expect(held.body).toContain('Too many failed sign-in attempts.');
      expect((await held.agent.get('/settings/profile')).statusCode).not.toBe(200);
      t.clock.advance(16 * MINUTE);
      expect((await passkeySignIn((o) => authenticator.assert(o))).status).toBe(303);
    });
  });
});
