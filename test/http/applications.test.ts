import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/cli/command.js';
import { appsCommands } from '../../src/cli/commands/apps.js';
import { ApiError } from '../../src/core/errors.js';
import { hashSecret } from '../../src/core/secrets.js';
import { verifyClientSecret, type Application } from '../../src/modules/applications/applications.js';
import { createApplication, deleteApplication, findApplicationByClientId, resetClientSecret, updateApplication } from '../../src/modules/applications/applications.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { given } from '../support/given.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';
import { OPERATOR } from '../../src/core/actor.js';
import { actingOf } from '../support/acting.js';

const BASE_URL = 'http://localhost:8080';
let counter = 0;

const createPerson = (t: TestApp, username = `dev${++counter}`): Promise<Person> => given.person(t, { username, email: null });

/** A browser signed in as a new person. */
const signedIn = (t: TestApp, username = `dev${++counter}`): Promise<{ agent: PageAgent; person: Person }> => given.signedIn(t, { username, email: null });

async function appRow(t: TestApp, id: string) {
  return t.services.db.selectFrom('applications').selectAll().where('id', '=', id).executeTakeFirst();
}

async function reload(t: TestApp, id: string): Promise<Application> {
  const app = await findApplicationByClientId(t.services, id);
  if (!app) throw new Error(`application ${id} is gone`);
  return app;
}

async function countApps(t: TestApp): Promise<number> {
  const row = await t.services.db.selectFrom('applications').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The value of a readonly field (input or textarea) on a page, entities decoded. */
function fieldValue(markup: string, id: string): string | undefined {
  const input = new RegExp(`<input id="${id}"[^>]* value="([^"]*)"`).exec(markup);
  const textarea = new RegExp(`<textarea id="${id}"[^>]*>([^<]*)</textarea>`).exec(markup);
  const raw = input?.[1] ?? textarea?.[1];
  return raw === undefined ? undefined : decodeEntities(raw);
}

function decodeEntities(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#96;/g, '`').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Creates an app through the portal form and returns its id and the secret shown (if any). */
async function createThroughPortal(agent: PageAgent, name: string, clientType: 'confidential' | 'public') {
  const res = await agent.submit('/developers/applications', '/developers/applications', { name, clientType });
  if (clientType === 'public') {
    expect(res.statusCode, res.body).toBe(303);
    const id = /^\/developers\/applications\/(\d+)\?created=1$/.exec(String(res.headers.location))?.[1];
    expect(id).toMatch(/^\d+$/);
    return { id: id as string, secret: undefined, res };
  }
  // Post/redirect/get (issue #24): the secret is on the page the redirect leads to, once.
  expect(res.statusCode, res.body).toBe(303);
  const id = /^\/developers\/applications\/(\d+)$/.exec(String(res.headers.location))?.[1];
  expect(id).toMatch(/^\d+$/);
  const shown = await agent.get(String(res.headers.location));
  return { id: id as string, secret: fieldValue(shown.body, 'client-secret'), res: shown };
}

describe('developer portal: creating applications', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('the portal is for signed-in people: others are sent to sign in and come back', async () => {
    const res = await new PageAgent(t.app).get('/developers/applications');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/login?next=%2Fdevelopers%2Fapplications');
  });

  it('a new person sees an empty list and the New application form with both client types explained', async () => {
    const { agent } = await signedIn(t);
    const res = await agent.get('/developers/applications');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('You have no applications yet');
    expect(res.body).toContain('name="clientType" value="confidential" checked');
    expect(res.body).toContain('name="clientType" value="public"');
    expect(res.body).toContain('every authorization must use PKCE (S256)');
    expect(res.body).toContain('name="_csrf"');
  });

  it('a confidential app shows its client secret once, and only the hash of it is stored', async () => {
    const { agent, person } = await signedIn(t);
    const { id, secret, res } = await createThroughPortal(agent, 'Acme Reader', 'confidential');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('it is shown only this once');
    expect(secret).toMatch(/^ghcs_[A-Za-z0-9_-]{43}$/);

    const row = await appRow(t, id);
    expect(row).toMatchObject({ client_secret_hash: hashSecret(secret as string) });
    expect(JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(secret as string);
    expect(String(row?.owner_id)).toBe(person.id);
    expect(verifyClientSecret(await reload(t, id), secret as string)).toBe(true);

    // Never again: not on the app page, not on the list.
    const again = await agent.get(`/developers/applications/${id}`);
    expect(again.statusCode).toBe(200);
    expect(again.body).not.toContain(secret as string);
    expect(again.body).not.toContain('id="client-secret"');
    expect(fieldValue(again.body, 'client-id')).toBe(id);
    const list = await agent.get('/developers/applications');
    expect(list.body).toContain('Acme Reader');
    expect(list.body).not.toContain(secret as string);
  });

  it('a public app has no client secret and says PKCE S256 is mandatory', async () => {
    const { agent } = await signedIn(t);
    const { id, res } = await createThroughPortal(agent, 'Pocket CLI', 'public');
    expect(res.body).not.toContain('ghcs_');
    const row = await appRow(t, id);
    expect(row?.client_secret_hash).toBeNull();
    expect(Number(row?.confidential)).toBe(0);
    const page = await agent.get(`/developers/applications/${id}?created=1`);
    expect(page.body).toContain('Application created.');
    expect(page.body).toContain('Public apps have no client secret');
    expect(page.body).not.toContain('Reset secret');
    // There is nothing to reset: the confirmation page sends back, the POST changes nothing.
    const confirm = await agent.get(`/developers/applications/${id}/reset-secret`);
    expect(confirm.statusCode).toBe(303);
    const reset = await agent.submit(`/developers/applications/${id}`, `/developers/applications/${id}/reset-secret`, {});
    expect(reset.statusCode).toBe(400);
    expect((await appRow(t, id))?.client_secret_hash).toBeNull();
  });

  it('a bad name is refused beside the field and nothing is created', async () => {
    const { agent } = await signedIn(t);
    const before = await countApps(t);
    for (const [name, message] of [
      ['x', 'Must be between 2 and 32 characters long.'],
      ['y'.repeat(33), 'Must be between 2 and 32 characters long.'],
      ['   ', 'Must be between 2 and 32 characters long.'],
      ['Gatehouse Login', 'people would take the app for the platform itself'],
      ['Evil\u202eApp', 'Must not contain control or invisible characters.'],
    ] as const) {
      const res = await agent.submit('/developers/applications', '/developers/applications', { name, clientType: 'confidential' });
      expect(res.statusCode, name).toBe(400);
      expect(res.body).toContain(message);
      expect(res.body).toContain('id="name-error"');
      expect(res.body).not.toContain('ghcs_');
    }
    expect(await countApps(t)).toBe(before);
  });

  it('copy buttons come from a same-origin script and stay hidden without it', async () => {
    const { agent } = await signedIn(t);
    const { id } = await createThroughPortal(agent, 'Copy Target', 'public');
    const page = await agent.get(`/developers/applications/${id}`);
    const src = /<script src="(\/assets\/app\.[0-9a-f]{12}\.js)" defer><\/script>/.exec(page.body)?.[1];
    expect(src).toMatch(/^\/assets\/app\.[0-9a-f]{12}\.js$/);
    expect(page.body).toContain('<button type="button" class="secondary" data-copy="client-id" hidden>Copy</button>');
    const script = await t.app.inject({ method: 'GET', url: src as string });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toContain('text/javascript');
    expect(script.body).toContain('navigator.clipboard.writeText');
  });

  it('a form without its CSRF token creates nothing', async () => {
    const { agent } = await signedIn(t);
    const before = await countApps(t);
    const res = await agent.postRaw('/developers/applications', { name: 'No Token', clientType: 'confidential' });
    expect(res.statusCode).toBe(403);
    expect(await countApps(t)).toBe(before);
  });
});

describe('developer portal: redirect URIs (OAUTH-CHECKLIST A6)', () => {
  let t: TestApp;
  let agent: PageAgent;
  let confidentialId: string;
  let publicId: string;
  beforeAll(async () => {
    t = await createTestApp();
    ({ agent } = await signedIn(t));
    confidentialId = (await createThroughPortal(agent, 'Server App', 'confidential')).id;
    publicId = (await createThroughPortal(agent, 'Native App', 'public')).id;
  });
  afterAll(async () => t.close());

  async function save(id: string, text: string) {
    return agent.submit(`/developers/applications/${id}`, `/developers/applications/${id}/oauth2`, { redirectUris: text });
  }

  it('the list is stored exactly as typed, one per line, blank lines and surrounding spaces dropped', async () => {
    const text = '  https://app.example/callback  \r\n\r\nhttp://127.0.0.1/cb\nhttp://[::1]:8080/cb?x=1\r\nhttps://app.example/callback/\n';
    const res = await save(confidentialId, text);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`/developers/applications/${confidentialId}?saved=1#oauth2`);
    expect((await reload(t, confidentialId)).redirectUris).toEqual(['https://app.example/callback', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb?x=1', 'https://app.example/callback/']);
    const page = await agent.get(`/developers/applications/${confidentialId}?saved=1`);
    expect(page.body).toContain('Changes saved.');
    expect(page.body).toContain('https://app.example/callback\nhttp://127.0.0.1/cb\nhttp://[::1]:8080/cb?x=1\nhttps://app.example/callback/</textarea>');
  });

  const refused: [string, string, RegExp][] = [
    ['a relative URI', '/callback', /must be absolute/],
    ['a fragment', 'https://app.example/cb#frag', /may not contain a fragment/],
    ['userinfo', 'https://app.example@evil.example/cb', /user name or password/],
    ['http on a public host', 'http://app.example/cb', /http is only allowed for the loopback addresses/],
    ['http on localhost', 'http://localhost:3000/cb', /not localhost/],
    ['javascript:', 'javascript:alert(document.cookie)', /javascript: URIs can never be redirect URIs/],
    ['data:', 'data:text/html,hi', /data: URIs can never be redirect URIs/],
    ['file:', 'file:///etc/passwd', /file: URIs can never be redirect URIs/],
    ['a private-use scheme for a confidential app', 'com.example.app:/callback', /only for public \(native\) apps/],
    ['a scheme without a domain', 'myapp:/callback', /private-use scheme named after a domain/],
    ['more than 2048 characters', `https://app.example/${'a'.repeat(2050)}`, /at most 2048 characters/],
  ];
  for (const [what, uri, message] of refused) {
    it(`refused with a clear message, nothing stored: ${what}`, async () => {
      const before = (await reload(t, confidentialId)).redirectUris;
      const res = await save(confidentialId, `https://ok.example/cb\n${uri}`);
      expect(res.statusCode).toBe(400);
      expect(decodeEntities(res.body)).toMatch(message);
      expect(res.body).toContain('id="redirectUris-error"');
      // The submitted text is shown again for correction.
      expect(decodeEntities(res.body)).toContain(`https://ok.example/cb\n${uri}</textarea>`);
      expect((await reload(t, confidentialId)).redirectUris).toEqual(before);
    });
  }

  it('more than 10 redirect URIs are refused', async () => {
    const before = (await reload(t, confidentialId)).redirectUris;
    const eleven = Array.from({ length: 11 }, (_, i) => `https://app.example/cb${i}`).join('\n');
    const res = await save(confidentialId, eleven);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('An application can have at most 10 redirect URIs.');
    expect((await reload(t, confidentialId)).redirectUris).toEqual(before);
    expect((await save(confidentialId, eleven.split('\n').slice(0, 10).join('\n'))).statusCode).toBe(303);
  });

  it('a URI listed twice is refused', async () => {
    const res = await save(confidentialId, 'https://app.example/a\nhttps://app.example/a');
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('https://app.example/a is listed twice.');
  });

  it('a public app may register a reverse-domain private-use scheme and loopback URIs', async () => {
    const res = await save(publicId, 'com.example.app:/callback\nhttp://127.0.0.1/callback');
    expect(res.statusCode, res.body).toBe(303);
    expect((await reload(t, publicId)).redirectUris).toEqual(['com.example.app:/callback', 'http://127.0.0.1/callback']);
  });

  it('createApplication refuses a bad redirect URI with a 50035 naming it, and stores nothing', async () => {
    const owner = await createPerson(t);
    const before = await countApps(t);
    const attempt = createApplication(t.services, actingOf({ kind: 'person', id: owner.id }), { name: 'Sneaky', redirectUris: ['https://ok.example/cb', 'https://ok.example/cb#x'], confidential: true });
    await expect(attempt).rejects.toBeInstanceOf(ApiError);
    const error = (await attempt.catch((e: unknown) => e)) as ApiError;
    expect(error.code).toBe(50035);
    expect(error.errors).toEqual({
      redirectUris: { '1': { _errors: [{ code: 'REDIRECT_URI_INVALID', message: 'https://ok.example/cb#x: A redirect URI may not contain a fragment (#…).' }] } },
    });
    expect(await countApps(t)).toBe(before);
  });

  it('updating name, description and icon URL saves them; an http icon URL is refused', async () => {
    const ok = await agent.submit(`/developers/applications/${confidentialId}`, `/developers/applications/${confidentialId}`, {
      name: '  Server App 2 ',
      description: 'Line one\r\nLine two',
      iconUrl: 'https://cdn.example/icon.png',
    });
    expect(ok.statusCode, ok.body).toBe(303);
    const app = await reload(t, confidentialId);
    expect(app).toMatchObject({ name: 'Server App 2', description: 'Line one\nLine two', iconUrl: 'https://cdn.example/icon.png', confidential: true });

    const bad = await agent.submit(`/developers/applications/${confidentialId}`, `/developers/applications/${confidentialId}`, {
      name: 'Renamed',
      description: 'd'.repeat(401),
      iconUrl: 'http://cdn.example/icon.png',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('Must be an https:// URL.');
    expect(bad.body).toContain('Must be 400 or fewer in length.');
    expect(await reload(t, confidentialId)).toMatchObject({ name: 'Server App 2', iconUrl: 'https://cdn.example/icon.png' });
  });

  it('the client type cannot change: the settings forms have no such field and ignore one sent anyway', async () => {
    const page = await agent.get(`/developers/applications/${confidentialId}`);
    expect(page.body).toContain('The client type is fixed when the application is created.');
    const token = csrfTokenIn(page.body) ?? '';
    const res = await agent.postRaw(`/developers/applications/${confidentialId}`, { name: 'Still Confidential', description: '', iconUrl: '', clientType: 'public', _csrf: token });
    expect(res.statusCode).toBe(303);
    const app = await reload(t, confidentialId);
    expect(app.confidential).toBe(true);
    expect(app.clientSecretHash).not.toBeNull();
  });
});

describe('developer portal: client secret reset', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('resetting asks for confirmation, shows the new secret once, and the old secret stops working at once', async () => {
    const { agent } = await signedIn(t);
    const { id, secret: first } = await createThroughPortal(agent, 'Rotating App', 'confidential');
    const detail = await agent.get(`/developers/applications/${id}`);
    expect(detail.body).toContain(`href="/developers/applications/${id}/reset-secret"`);

    const confirm = await agent.get(`/developers/applications/${id}/reset-secret`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('The current secret stops working immediately');
    expect(confirm.body).toContain(`action="/developers/applications/${id}/reset-secret"`);
    // Only looking at the confirmation changes nothing.
    expect(verifyClientSecret(await reload(t, id), first as string)).toBe(true);

    const res = await agent.submitAndFollow(`/developers/applications/${id}/reset-secret`, `/developers/applications/${id}/reset-secret`, {});
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const second = fieldValue(res.body, 'client-secret');
    expect(second).toMatch(/^ghcs_[A-Za-z0-9_-]{43}$/);
    expect(second).not.toBe(first);
    expect(res.body).toContain('The previous secret no longer works.');

    const app = await reload(t, id);
    expect(verifyClientSecret(app, first as string)).toBe(false);
    expect(verifyClientSecret(app, second as string)).toBe(true);
    expect(app.clientSecretHash).toBe(hashSecret(second as string));
    expect((await agent.get(`/developers/applications/${id}`)).body).not.toContain(second as string);
  });

  it('resetClientSecret returns a secret that verifies; the previous one no longer does', async () => {
    const owner = await createPerson(t);
    const { application, clientSecret } = await createApplication(t.services, actingOf({ kind: 'person', id: owner.id }), { name: 'Service App', redirectUris: ['https://svc.example/cb'], confidential: true });
    const next = await resetClientSecret(t.services, actingOf(OPERATOR), application.id);
    const app = await reload(t, application.id);
    expect(verifyClientSecret(app, clientSecret as string)).toBe(false);
    expect(verifyClientSecret(app, next)).toBe(true);
  });
});

describe("developer portal: someone else's applications are not there", () => {
  let t: TestApp;
  let bob: PageAgent;
  let app: Application;
  beforeAll(async () => {
    t = await createTestApp();
    const alice = await createPerson(t, 'alice');
    ({ application: app } = await createApplication(t.services, actingOf({ kind: 'person', id: alice.id }), { name: 'Alice App', redirectUris: ['https://alice.example/cb'], confidential: true }));
    ({ agent: bob } = await signedIn(t, 'bob'));
  });
  afterAll(async () => t.close());

  for (const path of ['', '/reset-secret', '/delete', '/oauth2/url-generator?scope=identify']) {
    it(`GET /developers/applications/:id${path} of another person's app → 404`, async () => {
      const res = await bob.get(`/developers/applications/${app.id}${path}`);
      expect(res.statusCode).toBe(404);
      expect(res.body).toContain('Application not found');
      expect(res.body).not.toContain('Alice App');
    });
  }

  const posts: [string, Record<string, string>][] = [
    ['', { name: 'Taken Over', description: '', iconUrl: '' }],
    ['/oauth2', { redirectUris: 'https://evil.example/cb' }],
    ['/reset-secret', {}],
    ['/delete', {}],
  ];
  for (const [path, fields] of posts) {
    it(`POST /developers/applications/:id${path} of another person's app → 404, nothing changed`, async () => {
      const page = await bob.get('/developers/applications');
      const res = await bob.postRaw(`/developers/applications/${app.id}${path}`, { ...fields, _csrf: csrfTokenIn(page.body) ?? '' });
      expect(res.statusCode).toBe(404);
      const now = await reload(t, app.id);
      expect(now).toEqual(app);
    });
  }

  for (const id of ['abc', '0', '99999999999999999999', '12345678901234567890123', '-1']) {
    it(`a malformed or unknown id (${id}) → 404 page`, async () => {
      const res = await bob.get(`/developers/applications/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toContain('text/html');
    });
  }

  it("bob's list does not show alice's app", async () => {
    const res = await bob.get('/developers/applications');
    expect(res.body).not.toContain('Alice App');
  });
});

describe('developer portal: OAuth2 URL generator', () => {
  let t: TestApp;
  let agent: PageAgent;
  let confidential: Application;
  let publicApp: Application;
  beforeAll(async () => {
    t = await createTestApp();
    let person: Person;
    ({ agent, person } = await signedIn(t));
    ({ application: confidential } = await createApplication(t.services, actingOf({ kind: 'person', id: person.id }), {
      name: 'Web App',
      redirectUris: ['https://web.example/callback', 'https://web.example/other?tenant=a b'.replace(' ', '%20')],
      confidential: true,
    }));
    ({ application: publicApp } = await createApplication(t.services, actingOf({ kind: 'person', id: person.id }), { name: 'Phone App', redirectUris: ['com.example.phone:/cb'], confidential: false }));
  });
  afterAll(async () => t.close());

  function generated(markup: string): string | undefined {
    return fieldValue(markup, 'generated-url');
  }

  it('offers the served scopes and the registered redirect URIs, and no link before a choice', async () => {
    const res = await agent.get(`/developers/applications/${confidential.id}/oauth2/url-generator`);
    expect(res.statusCode).toBe(200);
    // The bot issue serves bot and applications.commands too (test/http/bots.test.ts covers them).
    for (const scope of ['identify', 'email', 'servers', 'bot', 'applications.commands']) expect(res.body).toContain(`name="scope" value="${scope}"`);
    expect(res.body).toContain('<option value="https://web.example/callback">');
    expect(generated(res.body)).toBeUndefined();
  });

  it('the generated link is exactly the authorize URL with client_id, response_type, redirect_uri, scope and state', async () => {
    const state = 'a b+c%/é';
    const query = new URLSearchParams([
      ['scope', 'identify'],
      ['scope', 'email'],
      ['redirect_uri', 'https://web.example/other?tenant=a%20b'],
      ['state', state],
    ]);
    const res = await agent.get(`/developers/applications/${confidential.id}/oauth2/url-generator?${query.toString()}`);
    expect(res.statusCode).toBe(200);
    const link = generated(res.body);
    expect(link).toBe(
      `${BASE_URL}/app/oauth2/authorize?client_id=${confidential.id}&response_type=code&redirect_uri=https%3A%2F%2Fweb.example%2Fother%3Ftenant%3Da%2520b&scope=identify%20email&state=a%20b%2Bc%25%2F%C3%A9`,
    );
    const url = new URL(link as string);
    expect(`${url.origin}${url.pathname}`).toBe(`${BASE_URL}/app/oauth2/authorize`);
    expect([...url.searchParams]).toEqual([
      ['client_id', confidential.id],
      ['response_type', 'code'],
      ['redirect_uri', 'https://web.example/other?tenant=a%20b'],
      ['scope', 'identify email'],
      ['state', state],
    ]);
    // The choices stay selected.
    expect(res.body).toContain('name="scope" value="identify" checked');
    expect(res.body).toContain('name="scope" value="servers">');
    expect(res.body).toContain('data-copy="generated-url"');
  });

  it('scopes come out in canonical order and without state when none is given', async () => {
    const res = await agent.get(`/developers/applications/${confidential.id}/oauth2/url-generator?scope=servers&scope=identify&redirect_uri=${encodeURIComponent('https://web.example/callback')}&state=`);
    const url = new URL(generated(res.body) as string);
    expect(url.searchParams.get('scope')).toBe('identify servers');
    expect(url.searchParams.has('state')).toBe(false);
  });

  it('a redirect URI that is not registered gives no link', async () => {
    const res = await agent.get(`/developers/applications/${confidential.id}/oauth2/url-generator?scope=identify&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`);
    expect(res.statusCode).toBe(200);
    expect(generated(res.body)).toBeUndefined();
    expect(res.body).toContain('That redirect URI is not registered for this application.');
  });

  it('no scope ticked gives no link and says so', async () => {
    const res = await agent.get(`/developers/applications/${confidential.id}/oauth2/url-generator?redirect_uri=${encodeURIComponent('https://web.example/callback')}`);
    expect(generated(res.body)).toBeUndefined();
    expect(res.body).toContain('Tick at least one scope.');
  });

  it('for a public app the only redirect URI is used and the page explains code_challenge and S256', async () => {
    const res = await agent.get(`/developers/applications/${publicApp.id}/oauth2/url-generator?scope=identify`);
    const url = new URL(generated(res.body) as string);
    expect(url.searchParams.get('redirect_uri')).toBe('com.example.phone:/cb');
    expect(url.searchParams.get('client_id')).toBe(publicApp.id);
    expect(url.searchParams.has('code_challenge')).toBe(false);
    expect(res.body).toContain('code_challenge_method=S256');
    expect(res.body).toContain('This is a public app');
  });
});

describe('developer portal: deleting an application', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('asks for confirmation, then deletes the app with its grants, tokens and consents', async () => {
    const { agent, person } = await signedIn(t);
    const { id } = await createThroughPortal(agent, 'Doomed App', 'confidential');
    const user = await createPerson(t);
    const now = t.clock.now();
    const grantId = t.services.ids.next();
    await t.services.db.insertInto('oauth_grants').values({ id: grantId, application_id: id, user_id: user.id, scopes: 'identify', created_at: now, revoked_at: null, server_id: null, permissions: null }).execute();
    await t.services.db
      .insertInto('oauth_access_tokens')
      .values({ token_hash: hashSecret('ghat_x'), grant_id: grantId, application_id: id, user_id: user.id, scopes: 'identify', created_at: now, expires_at: now + 3_600_000 })
      .execute();
    await t.services.db
      .insertInto('oauth_refresh_tokens')
      .values({ token_hash: hashSecret('ghrt_x'), grant_id: grantId, application_id: id, user_id: user.id, scopes: 'identify', created_at: now, expires_at: now + 1000, used_at: null, successor_hash: null })
      .execute();
    await t.services.db.insertInto('oauth_consents').values({ user_id: user.id, application_id: id, scopes: 'identify', updated_at: now }).execute();

    const confirm = await agent.get(`/developers/applications/${id}/delete`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('This cannot be undone.');
    expect(await appRow(t, id)).toMatchObject({ name: 'Doomed App' });

    const res = await agent.submit(`/developers/applications/${id}/delete`, `/developers/applications/${id}/delete`, {});
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/developers/applications?deleted=1');
    expect(await appRow(t, id)).toBeUndefined();
    const left = async (table: 'oauth_grants' | 'oauth_access_tokens' | 'oauth_refresh_tokens' | 'oauth_consents') =>
      (await t.services.db.selectFrom(table).selectAll().where('application_id', '=', id).execute()).length;
    expect(await left('oauth_grants')).toBe(0);
    expect(await left('oauth_access_tokens')).toBe(0);
    expect(await left('oauth_refresh_tokens')).toBe(0);
    expect(await left('oauth_consents')).toBe(0);

    const list = await agent.get('/developers/applications?deleted=1');
    expect(list.body).toContain('The application was deleted.');
    expect(list.body).not.toContain('Doomed App');
    expect((await agent.get(`/developers/applications/${id}`)).statusCode).toBe(404);
    expect(person.id).toBeDefined();
  });

  it('deleting or updating an unknown application answers 10002 Unknown Application', async () => {
    await expect(deleteApplication(t.services, actingOf(OPERATOR), '123')).rejects.toMatchObject({ code: 10002, status: 404 });
    await expect(deleteApplication(t.services, actingOf(OPERATOR), 'not-an-id')).rejects.toMatchObject({ code: 10002 });
    await expect(updateApplication(t.services, actingOf(OPERATOR), '123', { name: 'x y' })).rejects.toMatchObject({ code: 10002 });
    await expect(resetClientSecret(t.services, actingOf(OPERATOR), '123')).rejects.toMatchObject({ code: 10002 });
  });
});

describe('CLI: gatehouse apps create', () => {
  let t: TestApp;
  const create = appsCommands.find((c) => c.name === 'apps create');
  beforeAll(async () => {
    t = await createTestApp();
    await createPerson(t, 'carol');
  });
  afterAll(async () => t.close());

  async function run(args: string[]) {
    if (!create) throw new Error('apps create is not registered');
    const { flags } = parseFlags(args, create.flags);
    return create.run(t.services, flags);
  }

  it('prints the client id and secret of a confidential app; the secret verifies', async () => {
    const out = await run(['--owner', 'carol', '--name', 'CLI App', '--redirect-uri', 'https://cli.example/cb', '--redirect-uri', 'http://127.0.0.1/cb', '--description', 'Made from the shell']);
    expect(Object.keys(out).sort()).toEqual(['bot_public', 'bot_require_code_grant', 'client_id', 'client_secret', 'confidential', 'id', 'name', 'redirect_uris'].sort());
    expect(out).toMatchObject({ name: 'CLI App', redirect_uris: ['https://cli.example/cb', 'http://127.0.0.1/cb'], confidential: true, bot_public: true, bot_require_code_grant: false });
    expect(out['client_id']).toBe(out['id']);
    expect(out['client_secret']).toMatch(/^ghcs_[A-Za-z0-9_-]{43}$/);
    const app = await reload(t, out['id'] as string);
    expect(app.description).toBe('Made from the shell');
    expect(verifyClientSecret(app, out['client_secret'] as string)).toBe(true);
  });

  it('--public --private-bot --require-code-grant: no secret, and the bot settings as asked', async () => {
    const out = await run(['--owner', 'carol', '--name', 'CLI Public', '--redirect-uri', 'com.example.cli:/cb', '--public', '--private-bot', '--require-code-grant']);
    expect(out).toMatchObject({ client_secret: null, confidential: false, bot_public: false, bot_require_code_grant: true, redirect_uris: ['com.example.cli:/cb'] });
    expect((await appRow(t, out['id'] as string))?.client_secret_hash).toBeNull();
  });

  it('a bad redirect URI fails with the field error and stores nothing', async () => {
    const before = await countApps(t);
    const error = await run(['--owner', 'carol', '--name', 'CLI Bad', '--redirect-uri', 'http://example.com/cb']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(JSON.stringify((error as ApiError).errors)).toContain('http is only allowed for the loopback addresses');
    expect(await countApps(t)).toBe(before);
  });

  it('an unknown owner fails with Unknown User', async () => {
    await expect(run(['--owner', 'nobody', '--name', 'Orphan', '--redirect-uri', 'https://x.example/cb'])).rejects.toMatchObject({ code: 10013 });
  });
});
