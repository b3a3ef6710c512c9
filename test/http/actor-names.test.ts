import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { APP_CSS_PATH } from '../../src/web/assets.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { signedIn } from '../support/directory-fixtures.js';
import { PageAgent } from '../support/page-agent.js';
import { call, createTestWebhook } from './webhook-url.fixtures.js';
import { personActingOf } from '../support/acting.js';

/**
 * Issue #21 §4 "Names that pass for the service": one rule (core/names.ts) for every name a person
 * sees as an actor, refusing invisible and text-direction characters and impersonation alike, and
 * every chosen name rendered as a bidi isolate.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const REVERSED = '\u202eESUOHETAG';
const CYRILLIC = 'G\u0430t\u0435h\u043eus\u0435';

describe('webhook names and username overrides', () => {
  it('U+202E + "ESUOHETAG" is refused as a webhook name and as a message username override', async () => {
    const hook = await createTestWebhook(t);
    const rename = await call(t, 'PATCH', hook.path, { name: REVERSED });
    expect(rename.statusCode).toBe(400);
    expect(rename.json()).toMatchObject({ code: 50035, errors: { name: { _errors: [{ code: 'USERNAME_INVALID', message: 'Must not contain control or invisible characters.' }] } } });
    const execute = await call(t, 'POST', `${hook.path}?wait=true`, { content: 'hi', username: `${REVERSED} ` });
    expect(execute.statusCode).toBe(400);
    expect(execute.json()).toMatchObject({ code: 50035, errors: { username: { _errors: [{ code: 'USERNAME_INVALID' }] } } });
    const hangul = await call(t, 'POST', `${hook.path}?wait=true`, { content: 'hi', username: '\u3164' });
    expect(hangul.statusCode).toBe(400);
  });
});

describe('app and bot names', () => {
  it('a Cyrillic "Gаtеhоusе", a reversed name and a Hangul-filler name are refused in the developer portal; nothing is created', async () => {
    const { agent } = await signedIn(t);
    const before = (await t.services.db.selectFrom('applications').select('id').execute()).length;
    for (const [name, message] of [
      [CYRILLIC, 'Names that pass for Gatehouse are not allowed: people would take the app for the platform itself.'],
      [`${REVERSED} app`, 'Must not contain control or invisible characters.'],
      ['\u3164\u3164\u3164', 'Must not contain control or invisible characters.'],
      ['System', 'is a reserved name'],
    ] as const) {
      const res = await agent.submit('/developers/applications', '/developers/applications', { name, clientType: 'confidential' });
      expect(res.statusCode, name).toBe(400);
      expect(res.body, name).toContain(message);
    }
    expect((await t.services.db.selectFrom('applications').select('id').execute()).length).toBe(before);
  });
});

describe("people's usernames and display names", () => {
  it('registration refuses a username or display name that passes for the service', async () => {
    const agent = new PageAgent(t.app);
    for (const fields of [
      { username: 'gatehouse', name: '' },
      { username: 'G4tehouse_team', name: '' },
      { username: 'everyone', name: '' },
      { username: 'fine_person', name: CYRILLIC },
      { username: 'fine_person2', name: REVERSED },
    ]) {
      const res = await agent.submit('/register', '/register', { email: '', password: 'correct horse battery', ...fields });
      expect(res.statusCode, JSON.stringify(fields)).toBe(400);
    }
    expect((await t.services.db.selectFrom('users').select('id').where('username_key', 'in', ['gatehouse', 'g4tehouse_team', 'everyone', 'fine_person', 'fine_person2']).execute()).length).toBe(0);
  });

  it('the profile form refuses a reversed or look-alike display name and keeps the old one', async () => {
    const { agent, person } = await signedIn(t, { name: 'Before' });
    for (const name of [REVERSED, CYRILLIC, 'Gate\u2066house']) {
      const res = await agent.submit('/settings/profile', '/settings/profile', { name, avatarUrl: '', email: '' });
      expect(res.statusCode, name).toBe(400);
    }
    const row = await t.services.db.selectFrom('users').select('name').where('id', '=', person.id).executeTakeFirstOrThrow();
    expect(row.name).toBe('Before');
  });
});

describe('server and role names', () => {
  it('a server named with text-direction characters or as the service is refused with a form error', async () => {
    const { agent } = await signedIn(t);
    for (const [name, message] of [
      [REVERSED, 'Must not contain control or invisible characters.'],
      ['Gatehouse Official', 'Names that pass for Gatehouse are not allowed.'],
    ] as const) {
      const res = await agent.submit('/', '/servers', { name });
      expect(res.statusCode, name).toBe(400);
      expect(res.body).toContain(message);
    }
  });

  it('a role name with text-direction characters is refused', async () => {
    const { agent, person } = await signedIn(t);
    const server = await createServer(t.services, personActingOf(person.id), { name: 'Roles' });
    const res = await agent.submit(`/servers/${server.id}/settings/roles`, `/servers/${server.id}/roles`, { name: `Mod${REVERSED}` });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Must not contain control or invisible characters.');
  });
});

describe('every chosen name is rendered as a bidi isolate', () => {
  it('the stylesheet isolates names: message authors, badges, member names, usernames, headings and links', async () => {
    const css = await t.app.inject({ method: 'GET', url: APP_CSS_PATH });
    expect(css.statusCode).toBe(200);
    const selectors = /([^{}]*)\{unicode-bidi:isolate\}/.exec(css.body)?.[1] ?? '';
    const rule = selectors.replace(/\/\*[\s\S]*?\*\//g, '').split(',').map((s) => s.trim());
    for (const selector of ['bdi', '.author', '.badge', 'strong', '.muted', 'h1', 'h2', 'a', '.consent-head']) expect(rule, selector).toContain(selector);
  });
});
