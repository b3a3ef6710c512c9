import { createHash, createSign, generateKeyPairSync, randomBytes } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE } from '../../src/core/clock.js';
import { beginPendingSignIn, sessionMethods } from '../../src/modules/mfa/mfa.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';

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

  async function addPasskey(agent: PageAgent, authenticator: SoftAuthenticator, name = 'Laptop'): Promise<void> {
    const creation = await options<{ challenge: string; rp: { id: string }; user: { id: string } }>(agent, '/settings/security', '/settings/security/passkeys/options');
    const res = await agent.submit('/settings/security', '/settings/security/passkeys', { name, credential: authenticator.register(creation) });
    expect(res.statusCode, res.body).toBe(303);
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
});
