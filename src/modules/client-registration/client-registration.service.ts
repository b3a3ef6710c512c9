import type { Acting, Who } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { HOUR } from '../../core/clock.js';
import { OAuthError } from '../../core/errors.js';
import { hashSecret, issueSecret, matchesHash } from '../../core/secrets.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import type { FieldChange } from '../../events/domain-events.js';
import { changing } from '../../events/event-bus.js';
import { addressBlock } from '../accounts/sign-in-throttle.js';
import type { Application } from '../applications/applications.js';
import { deleteApplicationIn, findApplicationByClientId, insertApplicationIn, updateApplicationIn } from '../applications/applications.service.js';
import { requireOperator } from '../directory/operators.service.js';
import { GRANT_TYPES } from '../oauth/grants/registry.js';
import {
  checkRegistration,
  clientInformation,
  REGISTRATION_OWNER_ID,
  REGISTRATIONS_PER_HOUR,
  storedMetadata,
  bearerToken,
  type ClientInformation,
  type RegistrationMetadata,
} from './client-registration.js';
import {
  findRegisteredClient,
  findRegistrationTokenExpiry,
  insertRegisteredClient,
  insertRegistrationToken,
  updateRegisteredMetadata,
  type RegisteredClientRow,
} from './client-registration.repository.js';

const PER_ADDRESS_RULE = { limit: REGISTRATIONS_PER_HOUR, windowMs: HOUR };

/** RFC 6750 §3.1: a missing or wrong bearer token, with its challenge. */
function invalidToken(description: string): OAuthError {
  // The description stays in the body: a header carries ASCII only.
  return new OAuthError('invalid_token', description, 401, { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
}

function refusal(problem: { error: 'invalid_redirect_uri' | 'invalid_client_metadata'; description: string }): OAuthError {
  return new OAuthError(problem.error, problem.description);
}

/** GATEHOUSE_CLIENT_REGISTRATION=off: the endpoint does not exist for clients (RFC 7591 is optional). */
function requireRegistrationOn(deps: Deps): void {
  if (deps.config.clientRegistration === 'off') throw new OAuthError('invalid_request', 'Dynamic client registration is off on this server (GATEHOUSE_CLIENT_REGISTRATION=off).', 404);
}

/** RFC 7591 §3: in `token` mode the request carries an operator's unexpired initial access token. */
async function checkInitialAccessToken(deps: Deps, authorization: string | undefined): Promise<void> {
  if (deps.config.clientRegistration !== 'token') return;
  const token = bearerToken(authorization);
  if (token === undefined) throw invalidToken('Registration on this server needs an initial access token (Authorization: Bearer …).');
  const found = await findRegistrationTokenExpiry(deps.db, hashSecret(token));
  if (!found || (found.expiresAt !== null && found.expiresAt <= deps.clock.now())) throw invalidToken('The initial access token is unknown or expired.');
}

/**
 * RFC 7591 §3: registers a client. Off → 404; `token` mode without a valid initial access token →
 * 401 invalid_token; metadata refused → 400 invalid_redirect_uri / invalid_client_metadata; more
 * than REGISTRATIONS_PER_HOUR registrations from one address (IPv6 by /64) in an hour → 429. The
 * application is owned by the system owner (client-registration.ts), has no bot, and its client
 * secret and registration access token are returned once and stored as SHA-256 only. Audited as
 * app.registered.
 */
export async function registerClient(deps: Deps, acting: Acting<Who>, input: { body: unknown; authorization: string | undefined }): Promise<ClientInformation> {
  requireRegistrationOn(deps);
  await checkInitialAccessToken(deps, input.authorization);
  const checked = checkRegistration(input.body, deps.config.serviceName, GRANT_TYPES);
  if (!checked.ok) throw refusal(checked.problem);
  const metadata = checked.value;

  // Counted only for registrations that would succeed: a refused request changes nothing.
  if (acting.address !== null) {
    const decision = await deps.buckets.take(`register:address:${addressBlock(acting.address)}`, PER_ADDRESS_RULE, deps.clock.now());
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil(decision.resetAfterMs / 1000));
      throw new OAuthError('temporarily_unavailable', `At most ${REGISTRATIONS_PER_HOUR} clients may be registered per hour from one address; retry in ${seconds} seconds.`, 429, { 'Retry-After': String(seconds) });
    }
  }

  const confidential = metadata.token_endpoint_auth_method !== 'none';
  const secret = confidential ? issueSecret(deps.random, 'clientSecret') : null;
  const registrationToken = issueSecret(deps.random, 'registrationAccessToken');
  const now = deps.clock.now();
  const application: Application = {
    id: deps.ids.next(),
    ownerId: REGISTRATION_OWNER_ID,
    name: metadata.client_name,
    description: '',
    iconUrl: metadata.logo_uri ?? null,
    confidential,
    clientSecretHash: secret ? secret.hash : null,
    redirectUris: metadata.redirect_uris,
    // Issue #41 §3: a registered app cannot have a bot (bots.service.ts refuses), so nobody installs one.
    botPublic: false,
    botRequireCodeGrant: false,
    botUserId: null,
    createdAt: now,
    updatedAt: now,
    disabledAt: null,
    disabledReason: null,
  };
  const stored = storedMetadata(metadata);
  await changing(deps, acting, async (trx, emit) => {
    await insertApplicationIn(trx, application);
    await insertRegisteredClient(trx, { applicationId: application.id, registrationTokenHash: registrationToken.hash, metadata: stored, address: acting.address, createdAt: now });
    emit({ type: 'app.registered', applicationId: application.id, confidential });
  });
  return clientInformation(deps.config.baseUrl, application, stored, registrationToken.plain, secret ? secret.plain : null);
}

interface Registration {
  app: Application;
  row: RegisteredClientRow;
  token: string;
}

/**
 * RFC 7592 §3: the registration `clientId` when the bearer token is its registration access token.
 * Anything else — no token, a wrong one, an unknown or malformed client id, an app that did not
 * register itself — is the same 401 invalid_token, so the endpoint reveals nothing.
 */
async function authorizedRegistration(deps: Deps, clientId: string, authorization: string | undefined): Promise<Registration> {
  requireRegistrationOn(deps);
  const token = bearerToken(authorization);
  if (token === undefined) throw invalidToken('This needs the registration access token (Authorization: Bearer …).');
  const row = isSnowflake(clientId) ? await findRegisteredClient(deps.db, clientId) : undefined;
  const app = row ? await findApplicationByClientId(deps, clientId) : undefined;
  if (!row || !app || !matchesHash(token, row.registrationTokenHash)) throw invalidToken('The registration access token is not valid for this client.');
  return { app, row, token };
}

/** RFC 7592 §2.1: the client's current registration (without its secret, which is stored as a hash). */
export async function readRegistration(deps: Deps, clientId: string, authorization: string | undefined): Promise<ClientInformation> {
  const { app, row, token } = await authorizedRegistration(deps, clientId, authorization);
  return clientInformation(deps.config.baseUrl, app, row.metadata, token, null);
}

/**
 * RFC 7592 §2.2: replaces the registration with the metadata sent, by the same rules as
 * registration. The body's `client_id` must be this client's, and a `client_secret` in it must be
 * the current one (400 invalid_request otherwise); the client type cannot change
 * (token_endpoint_auth_method `none` ↔ a secret method: invalid_client_metadata). Audited as
 * app.updated with the fields that changed.
 */
export async function updateRegistration(deps: Deps, acting: Acting<Who>, clientId: string, input: { body: unknown; authorization: string | undefined }): Promise<ClientInformation> {
  const { app, row, token } = await authorizedRegistration(deps, clientId, input.authorization);
  const body = input.body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const fields = body as Record<string, unknown>;
    if (fields.client_id !== clientId) throw new OAuthError('invalid_request', 'client_id in the body must be this client\'s id (RFC 7592 §2.2).');
    if (fields.client_secret !== undefined && (typeof fields.client_secret !== 'string' || app.clientSecretHash === null || !matchesHash(fields.client_secret, app.clientSecretHash))) {
      throw new OAuthError('invalid_request', 'client_secret in the body does not match this client\'s secret (RFC 7592 §2.2).');
    }
  }
  const checked = checkRegistration(body, deps.config.serviceName, GRANT_TYPES);
  if (!checked.ok) throw refusal(checked.problem);
  const metadata = checked.value;
  if ((metadata.token_endpoint_auth_method !== 'none') !== app.confidential) {
    throw new OAuthError('invalid_client_metadata', `token_endpoint_auth_method cannot change between none and a client secret method: this client is ${app.confidential ? 'confidential' : 'public'}; register a new one instead.`);
  }

  const stored = storedMetadata(metadata);
  const changes = registrationChanges(app, row.metadata.scope, metadata);
  const updated: Application = { ...app, name: metadata.client_name, iconUrl: metadata.logo_uri ?? null, redirectUris: metadata.redirect_uris, updatedAt: deps.clock.now() };
  await changing(deps, acting, async (trx, emit) => {
    if (!(await updateApplicationIn(trx, app.id, { name: updated.name, iconUrl: updated.iconUrl, redirectUris: updated.redirectUris }, updated.updatedAt))) throw invalidToken('The registration access token is not valid for this client.');
    await updateRegisteredMetadata(trx, app.id, stored);
    if (changes.length > 0) emit({ type: 'app.updated', applicationId: app.id, changes });
  });
  return clientInformation(deps.config.baseUrl, updated, stored, token, null);
}

function registrationChanges(app: Application, oldScope: string | undefined, m: RegistrationMetadata): FieldChange[] {
  const changes: FieldChange[] = [];
  const field = (key: string, old: string | null, value: string | null) => {
    if (value !== old) changes.push({ key, old, new: value });
  };
  field('name', app.name, m.client_name);
  field('icon_url', app.iconUrl, m.logo_uri ?? null);
  field('redirect_uris', app.redirectUris.join(' '), m.redirect_uris.join(' '));
  field('scope', oldScope ?? null, m.scope ?? null);
  return changes;
}

/**
 * RFC 7592 §2.3: deletes the registration and its application; its grants, codes, tokens and
 * consents go with it (ON DELETE CASCADE). Audited as app.deleted.
 */
export async function deleteRegistration(deps: Deps, acting: Acting<Who>, clientId: string, authorization: string | undefined): Promise<void> {
  const { app } = await authorizedRegistration(deps, clientId, authorization);
  await changing(deps, acting, async (trx, emit) => {
    if (!(await deleteApplicationIn(trx, app.id))) throw invalidToken('The registration access token is not valid for this client.');
    emit({ type: 'app.deleted', applicationId: app.id });
  });
}

/**
 * `gatehouse apps registration-token`: an initial access token for GATEHOUSE_CLIENT_REGISTRATION=token
 * (RFC 7591 §3), usable for any number of registrations until it expires (`expiresInMs` null:
 * never). Shown once; only its SHA-256 is stored. The operator's only; audited as
 * registration_token.created.
 */
export async function mintRegistrationToken(deps: Deps, acting: Acting<Actor>, expiresInMs: number | null): Promise<{ id: string; token: string; expiresAt: number | null }> {
  await requireOperator(deps, acting.actor);
  const secret = issueSecret(deps.random, 'initialAccessToken');
  const now = deps.clock.now();
  const id = deps.ids.next();
  const expiresAt = expiresInMs === null ? null : now + expiresInMs;
  await changing(deps, acting, async (trx, emit) => {
    await insertRegistrationToken(trx, { id, tokenHash: secret.hash, expiresAt, createdAt: now });
    emit({ type: 'registration_token.created', tokenId: id, expiresAt });
  });
  return { id, token: secret.plain, expiresAt };
}
