import { OPERATOR, person as person_ } from '../../src/core/actor.js';
import { MINUTE } from '../../src/core/clock.js';
import { hashSecret, issueSecret } from '../../src/core/secrets.js';
import { registerPerson, updateProfile } from '../../src/modules/accounts/accounts.service.js';
import { startSession } from '../../src/modules/accounts/sessions.service.js';
import type { Application } from '../../src/modules/applications/applications.js';
import { replaceClientSecretHash } from '../../src/modules/applications/applications.repository.js';
import { createApplication } from '../../src/modules/applications/applications.service.js';
import { enableBot } from '../../src/modules/applications/bots.service.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createServer, getServer, type CreatedServer } from '../../src/modules/directory/servers.service.js';
import { insertCode } from '../../src/modules/oauth/codes.repository.js';
import { insertGrant } from '../../src/modules/oauth/grants.repository.js';
import { s256Challenge } from '../../src/modules/oauth/pkce.js';
import type { Webhook } from '../../src/modules/webhooks/webhooks.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { cookieNames } from '../../src/web/pages.js';
import type { TestApp } from './app.js';
import { PageAgent } from './page-agent.js';
import { actingOf, ANONYMOUS, personActingOf } from './acting.js';

/**
 * Test data, made the way the product makes it: through the services that the pages, the API
 * and the CLI call, so a fixture can never hold a row the product could not have written.
 *
 *   const owner = await given.person(t, { username: 'alice' });
 *   const server = await given.server(t, { owner });
 *   const client = await given.confidentialApp(t, { owner });
 *
 * Two things go through repositories, because no service makes them: `given.code()`, an
 * authorization code as the consent screen would store it, for token-endpoint tests that must not
 * depend on the consent page; and an app's chosen `clientSecret`, for the RFC 6749 §2.3.1
 * encoding tests that need characters the service's random secrets never contain.
 */

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

export interface PersonInput {
  username?: string;
  /** Default: the username. */
  name?: string;
  /** Default `<username>@example.com`; null for none. */
  email?: string | null;
  avatarUrl?: string | null;
}

/** Someone registered as the sign-up page and `gatehouse people create` register them. */
async function person(t: TestApp, input: PersonInput = {}): Promise<Person> {
  const username = input.username ?? `p${unique()}`;
  const registered = await registerPerson(t.services, actingOf(ANONYMOUS), {
    username,
    name: input.name ?? username,
    email: input.email === undefined ? `${username}@example.com` : input.email,
    password: `given ${unique()} password`,
  });
  if (input.avatarUrl == null) return registered;
  return updateProfile(t.services, personActingOf(registered.id), { avatarUrl: input.avatarUrl });
}

/** A person with a live session, and a browser-like agent carrying its cookie. */
async function signedIn(t: TestApp, input: PersonInput = {}): Promise<{ agent: PageAgent; person: Person }> {
  const someone = await person(t, input);
  const session = await startSession(t.services, personActingOf(someone.id), 'vitest');
  const agent = new PageAgent(t.app);
  agent.cookies.set(cookieNames(false).session, session.token);
  return { agent, person: someone };
}

/** A server with its #general channel (`server.channels[0]`), owned by `owner` (a new person by default). */
async function server(t: TestApp, input: { owner?: Person; name?: string } = {}): Promise<CreatedServer & { owner: Person }> {
  const owner = input.owner ?? (await person(t));
  const created = await createServer(t.services, personActingOf(owner.id), { name: input.name ?? 'Builds' });
  return { ...created, owner };
}

export interface TestClient {
  app: Application;
  clientId: string;
  /** Undefined for a public app. */
  clientSecret?: string;
  redirectUri: string;
}

export interface AppInput {
  owner?: Person;
  name?: string;
  description?: string;
  redirectUris?: string[];
  /** A confidential app's secret, instead of the random one the service issues. */
  clientSecret?: string;
}

/** An OAuth2 application registered as the developer portal registers it. */
async function app(t: TestApp, input: AppInput & { confidential: boolean }): Promise<TestClient> {
  const owner = input.owner ?? (await person(t));
  const redirectUris = input.redirectUris ?? ['https://app.example.com/callback'];
  const created = await createApplication(t.services, actingOf(person_(owner.id)), {
    name: input.name ?? 'Test app',
    description: input.description ?? 'An app for tests',
    redirectUris,
    confidential: input.confidential,
  });
  let { application, clientSecret } = created;
  if (input.clientSecret !== undefined && input.confidential) {
    clientSecret = input.clientSecret;
    application = { ...application, clientSecretHash: hashSecret(clientSecret), updatedAt: t.clock.now() };
    await replaceClientSecretHash(t.services.db, application.id, application.clientSecretHash as string, application.updatedAt);
  }
  return {
    app: application,
    clientId: application.id,
    ...(clientSecret === null ? {} : { clientSecret }),
    redirectUri: redirectUris[0] as string,
  };
}

/** An app with a client secret (RFC 6749 §2.1 confidential client). */
const confidentialApp = (t: TestApp, input: AppInput = {}) => app(t, { ...input, confidential: true });
/** An app without a secret: PKCE only (RFC 6749 §2.1 public client). */
const publicApp = (t: TestApp, input: AppInput = {}) => app(t, { ...input, confidential: false });

export interface TestBot {
  client: TestClient;
  botUserId: string;
  token: string;
  /** `Authorization: Bot <token>` */
  headers: { authorization: string };
}

/** An app with a bot account and its token, as the portal's "Add bot" makes it. */
async function bot(t: TestApp, input: { name?: string; owner?: Person } = {}): Promise<TestBot> {
  const client = await confidentialApp(t, { ...(input.owner ? { owner: input.owner } : {}), name: input.name ?? 'Weather Bot' });
  const { botUserId, token } = await enableBot(t.services, actingOf(OPERATOR), client.app.id);
  return { client, botUserId, token, headers: { authorization: `Bot ${token}` } };
}

/** A webhook made through the management service, with the URL path its holder uses. */
export interface TestWebhook {
  webhook: Webhook;
  token: string;
  channel: Channel;
  /** /api/v1/webhooks/{id}/{token} */
  path: string;
}

/**
 * A webhook in a new server's #general channel (or in `channel`, for a second one beside it),
 * created by that server's owner.
 */
async function webhook(t: TestApp, input: { name?: string; avatarUrl?: string | null; channel?: Channel } = {}): Promise<TestWebhook> {
  // The creator needs Manage webhooks there (SPEC §8): the server's owner.
  let channel = input.channel;
  let creatorId = channel?.serverId ? (await getServer(t.services, channel.serverId))?.ownerId : undefined;
  if (!channel || creatorId === undefined) {
    const creator = await person(t);
    creatorId = creator.id;
    channel = (await server(t, { owner: creator })).channels[0] as Channel;
  }
  const { webhook: made, token } = await createWebhook(t.services, actingOf(person_(creatorId)), channel, { name: input.name ?? 'CI', avatarUrl: input.avatarUrl ?? null });
  return { webhook: made, token, channel, path: `/api/v1/webhooks/${made.id}/${token}` };
}

/** A PKCE verifier (43+ unreserved characters, RFC 7636 §4.1) and its S256 challenge. */
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
 * A code as GET /app/oauth2/authorize + consent would store it: 10 minutes, bound to the app,
 * redirect_uri, scopes, person and (by default) a PKCE challenge. Written through the oauth
 * repositories because no service issues a code outside the consent flow.
 */
async function code(
  t: TestApp,
  input: { client: TestClient; person: Person; scopes?: string[]; pkce?: boolean; redirectUri?: string; redirectUriSent?: boolean },
): Promise<IssuedCode> {
  const now = t.clock.now();
  const grantId = t.services.ids.next();
  const scopes = input.scopes ?? ['identify'];
  const pair = input.pkce === false ? undefined : pkcePair();
  const issued = issueSecret(t.services.random, 'authorizationCode');
  await insertGrant(t.services.db, { id: grantId, applicationId: input.client.app.id, userId: input.person.id, scopes, createdAt: now, serverId: null, permissions: null });
  await insertCode(t.services.db, {
    codeHash: issued.hash,
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
  return { code: issued.plain, grantId, ...(pair ? { verifier: pair.verifier } : {}) };
}

export const given = { person, signedIn, server, app, confidentialApp, publicApp, bot, webhook, code };
