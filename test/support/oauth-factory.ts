import type { LightMyRequestResponse } from 'fastify';
import type { Person } from '../../src/modules/directory/people.js';
import { formUrlEncode } from '../../src/modules/oauth/client-auth.js';
import type { TestApp } from './app.js';
import { given, type IssuedCode, type PersonInput, type TestClient } from './given.js';

/**
 * OAuth client helpers for token-side tests: form posts, Basic auth, code exchanges. The people,
 * apps and codes they use come from given.ts; the creators below keep the older names.
 */

export type { IssuedCode, TestClient } from './given.js';

export const createPerson = (t: TestApp, input: PersonInput = {}): Promise<Person> => given.person(t, input);

export const createClient = (t: TestApp, input: { owner: Person; confidential?: boolean; clientSecret?: string; redirectUris?: string[]; name?: string }): Promise<TestClient> =>
  given.app(t, { ...input, confidential: input.confidential ?? true });

export const issueCode = (t: TestApp, input: Parameters<typeof given.code>[1]): Promise<IssuedCode> => given.code(t, input);

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
