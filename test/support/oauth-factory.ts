import type { LightMyRequestResponse } from 'fastify';
import { MINUTE } from '../../src/core/clock.js';
import { hashSecret, issueSecret } from '../../src/core/secrets.js';
import type { Application } from '../../src/modules/applications/applications.js';
import { insertApplication } from '../../src/modules/applications/applications.repository.js';
import type { Person } from '../../src/modules/directory/people.js';
import { findPersonById, insertPerson } from '../../src/modules/directory/people.repository.js';
import { formUrlEncode } from '../../src/modules/oauth/client-auth.js';
import { insertCode } from '../../src/modules/oauth/codes.repository.js';
import { insertGrant } from '../../src/modules/oauth/grants.repository.js';
import { s256Challenge } from '../../src/modules/oauth/pkce.js';
import type { TestApp } from './app.js';

/**
 * OAuth test data made directly through the repositories, so token-side tests do not depend on
 * the consent page: a person, an app (confidential or public), and an issued code as the
 * authorization endpoint would store it.
 */

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

export async function createPerson(t: TestApp, input: { username?: string; name?: string; email?: string | null; avatarUrl?: string | null } = {}): Promise<Person> {
  const id = t.services.ids.next();
  const username = input.username ?? `p${unique()}`;
  await insertPerson(t.services.db, {
    id,
    username,
    name: input.name ?? username,
    email: input.email === undefined ? `${username}@example.com` : input.email,
    passwordHash: null,
    bot: false,
    applicationId: null,
    avatarUrl: input.avatarUrl ?? null,
    createdAt: t.clock.now(),
  });
  const person = await findPersonById(t.services.db, id);
  if (!person) throw new Error('person not created');
  return person;
}

export interface TestClient {
  app: Application;
  clientId: string;
  /** Undefined for a public app. */
  clientSecret?: string;
  redirectUri: string;
}

export async function createClient(
  t: TestApp,
  input: { owner: Person; confidential?: boolean; clientSecret?: string; redirectUris?: string[]; name?: string },
): Promise<TestClient> {
  const confidential = input.confidential ?? true;
  const secret = confidential ? (input.clientSecret ?? issueSecret(t.services.random, 'clientSecret').plain) : undefined;
  const now = t.clock.now();
  const redirectUris = input.redirectUris ?? ['https://app.example.com/callback'];
  const app: Application = {
    id: t.services.ids.next(),
    ownerId: input.owner.id,
    name: input.name ?? 'Test app',
    description: 'An app for tests',
    iconUrl: null,
    confidential,
    clientSecretHash: secret === undefined ? null : hashSecret(secret),
    redirectUris,
    botPublic: true,
    botRequireCodeGrant: false,
    botUserId: null,
    createdAt: now,
    updatedAt: now,
  };
  await insertApplication(t.services.db, app);
  return { app, clientId: app.id, ...(secret === undefined ? {} : { clientSecret: secret }), redirectUri: redirectUris[0] as string };
}

/** A PKCE verifier (43+ unreserved characters) and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = `v${unique()}${'x'.repeat(60)}`.slice(0, 64);
  return { verifier, challenge: s256Challenge(verifier) };
}

export interface IssuedCode {
  code: string;
  grantId: string;
  verifier?: string;
}

/**
 * A code as GET /app/oauth2/authorize + consent would issue it: 10 minutes, bound to app,
 * redirect_uri, scopes, person and (by default) a PKCE challenge.
 */
export async function issueCode(
  t: TestApp,
  input: { client: TestClient; person: Person; scopes?: string[]; pkce?: boolean; redirectUri?: string; redirectUriSent?: boolean },
): Promise<IssuedCode> {
  const now = t.clock.now();
  const grantId = t.services.ids.next();
  const scopes = input.scopes ?? ['identify'];
  const pair = input.pkce === false ? undefined : pkcePair();
  const code = issueSecret(t.services.random, 'authorizationCode');
  await insertGrant(t.services.db, { id: grantId, applicationId: input.client.app.id, userId: input.person.id, scopes, createdAt: now, serverId: null, permissions: null });
  await insertCode(t.services.db, {
    codeHash: code.hash,
    grantId,
    applicationId: input.client.app.id,
    userId: input.person.id,
    redirectUri: input.redirectUri ?? input.client.redirectUri,
    redirectUriSent: input.redirectUriSent ?? true,
    scopes,
    codeChallenge: pair?.challenge ?? null,
    createdAt: now,
    expiresAt: now + 10 * MINUTE,
  });
  return { code: code.plain, grantId, ...(pair ? { verifier: pair.verifier } : {}) };
}

/** `Authorization: Basic …` as RFC 6749 §2.3.1 says: each half form-urlencoded, then base64. */
export function basicAuth(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${formUrlEncode(clientId)}:${formUrlEncode(clientSecret)}`).toString('base64')}`;
}

let addressCounter = 0;
/** A fresh client address per request, so throttling of failures in one test never leaks into another. */
export function nextAddress(): string {
  addressCounter += 1;
  return `10.${(addressCounter >> 16) & 255}.${(addressCounter >> 8) & 255}.${addressCounter & 255}`;
}

export interface FormOptions {
  headers?: Record<string, string>;
  /** The client address; a fresh one per request unless given. */
  address?: string;
}

/** POSTs a form (fields may repeat with arrays) like an OAuth client. */
export async function postForm(t: TestApp, url: string, fields: Record<string, string | string[]>, options: FormOptions = {}): Promise<LightMyRequestResponse> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const item of Array.isArray(v) ? v : [v]) body.append(k, item);
  return t.app.inject({
    method: 'POST',
    url,
    payload: body.toString(),
    remoteAddress: options.address ?? nextAddress(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
  });
}

/** The authorization_code exchange a well-behaved client sends for `issued` (client_secret_post or PKCE only). */
export function codeExchangeFields(client: TestClient, issued: IssuedCode): Record<string, string> {
  return {
    grant_type: 'authorization_code',
    code: issued.code,
    redirect_uri: client.redirectUri,
    client_id: client.clientId,
    ...(client.clientSecret ? { client_secret: client.clientSecret } : {}),
    ...(issued.verifier ? { code_verifier: issued.verifier } : {}),
  };
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

/** Issues a code and exchanges it: a working pair of tokens for `person` and `client`. */
export async function obtainTokens(t: TestApp, client: TestClient, person: Person, scopes: string[] = ['identify']): Promise<Tokens & { grantId: string }> {
  const issued = await issueCode(t, { client, person, scopes });
  const res = await postForm(t, '/api/oauth2/token', codeExchangeFields(client, issued));
  if (res.statusCode !== 200) throw new Error(`token exchange failed: ${res.statusCode} ${res.body}`);
  return { ...(res.json() as Tokens), grantId: issued.grantId };
}

/** GET with a bearer token. */
export async function getWithBearer(t: TestApp, url: string, token: string): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
}
