import { randomBytes } from 'node:crypto';
import { s256Challenge } from '../../src/modules/oauth/pkce.js';
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createApplication, type NewApplication } from '../../src/modules/applications/applications.service.js';
import type { Application } from '../../src/modules/applications/applications.js';
import type { Person } from '../../src/modules/directory/people.js';
import type { TestApp } from '../support/app.js';
import { given } from '../support/given.js';
import { csrfTokenIn, type PageAgent } from '../support/page-agent.js';
import { actingOf } from '../support/acting.js';

/** Shared by the authorize, consent and authorized-apps tests. */

export const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

/** A new PKCE pair: every authorization request needs its own (OAUTH-CHECKLIST B10). */
export function freshPkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: s256Challenge(verifier) };
}
export const ISSUER = 'http://localhost:8080';

let counter = 0;

/** A person named after their username ("alice" is Alice), through given.person. */
export const createPerson = (t: TestApp, username = `person${++counter}`): Promise<Person> =>
  given.person(t, { username, name: `${username[0]?.toUpperCase()}${username.slice(1)}` });

/** A browser-like agent signed in as a new person. */
export const signedIn = (t: TestApp, username = `person${++counter}`): Promise<{ agent: PageAgent; person: Person }> =>
  given.signedIn(t, { username, name: `${username[0]?.toUpperCase()}${username.slice(1)}` });

/** "Acme Reader", a public app by default, made as the developer portal makes it. */
export async function createApp(t: TestApp, owner: Person, input: Partial<NewApplication> = {}): Promise<{ app: Application; clientSecret: string | null }> {
  const created = await createApplication(t.services, actingOf({ kind: 'person', id: owner.id }), {
    name: 'Acme Reader',
    description: 'Reads your profile to personalise Acme.',
    redirectUris: ['https://app.example/callback'],
    confidential: false,
    ...input,
  });
  return { app: created.application, clientSecret: created.clientSecret };
}

/** `/app/oauth2/authorize?…` with parameters in the given order; undefined values left out. */
export function authorizePath(params: Record<string, string | string[] | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) query.append(k, item);
  }
  return `/app/oauth2/authorize?${query.toString()}`;
}

/** A valid public-client request for `app`, with overrides. */
export function requestFor(app: Application, overrides: Record<string, string | string[] | undefined> = {}): Record<string, string | string[] | undefined> {
  return {
    response_type: 'code',
    client_id: app.id,
    redirect_uri: app.redirectUris[0],
    scope: 'identify email',
    state: 'xyz-state',
    // A fresh challenge per request, as RFC 9700 §2.1.1 requires of clients (B10 refuses reuse).
    code_challenge: freshPkce().challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
}

/** The redirect target of a response, asserting that it is one. */
export function location(res: LightMyRequestResponse): URL {
  expect([302, 303]).toContain(res.statusCode);
  const where = res.headers['location'];
  expect(typeof where).toBe('string');
  return new URL(where as string, 'http://localhost:8080');
}

/** The hidden fields of the consent form, as the browser would send them. */
export function consentFields(markup: string): Record<string, string> {
  const fields: Record<string, string> = {};
  const form = /<form method="post" action="\/app\/oauth2\/authorize">([\s\S]*?)<\/form>/.exec(markup)?.[1] ?? '';
  for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[m[1] as string] = decodeEntities(m[2] as string);
  }
  return fields;
}

function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`' })[e] ?? '');
}

/** Opens the consent screen and presses a button; returns the response to the POST. */
export async function answerConsent(agent: PageAgent, path: string, decision: 'authorize' | 'cancel'): Promise<LightMyRequestResponse> {
  const page = await agent.get(path);
  expect(page.statusCode).toBe(200);
  const fields = consentFields(page.body);
  expect(fields['_csrf']).toBe(csrfTokenIn(page.body));
  return agent.postRaw('/app/oauth2/authorize', { ...fields, decision });
}
