import type { Deps } from '../../deps.js';
import { OutboundError, type OutboundClient } from '../../http/outbound.js';
import type { Application } from '../applications/applications.js';
import { findApplicationByClientId, insertApplicationIn, updateApplicationIn } from '../applications/applications.service.js';
import { REGISTRATION_OWNER_ID } from '../client-registration/client-registration.js';
import {
  CACHE_ENTRIES_MAX,
  checkMetadataDocument,
  checkMetadataUrl,
  documentLifetimeMs,
  DOCUMENT_MAX_BYTES,
  FETCH_TIMEOUT_MS,
  NEW_DOCUMENTS_PER_HOST_PER_HOUR,
  type Checked,
  type DocumentMetadata,
} from './client-metadata.js';
import { findDocumentApplicationId, findDocumentUrl, insertDocument, touchDocument } from './client-metadata.repository.js';

/**
 * Client ID metadata documents (issue #41 §3): resolves a URL client_id to the application it
 * stands for, fetching the document through the outbound client (DESIGN §4: public addresses only
 * unless allowed, no redirects, a deadline and a size cap) when this instance holds no fresh copy.
 * The application (owned by the registered-clients system owner, public, no bot) is created on
 * first sight and follows the document's redirect URIs and name after each fetch, so codes, grants
 * and tokens refer to it like any app. Each instance keeps its own small cache; several instances
 * each fetch for themselves, which the document's publisher sees as a few more requests.
 */

const NEW_DOCUMENTS_RULE = { limit: NEW_DOCUMENTS_PER_HOST_PER_HOUR, windowMs: 60 * 60_000 };

interface Cached {
  applicationId: string;
  expiresAt: number;
}

/** Per running service (keyed by its outbound client, one per service): URL → fresh application. */
const caches = new WeakMap<OutboundClient, Map<string, Cached>>();

function cacheOf(deps: Deps): Map<string, Cached> {
  let cache = caches.get(deps.outbound);
  if (!cache) {
    cache = new Map();
    caches.set(deps.outbound, cache);
  }
  return cache;
}

/** The application a URL client_id stands for, or why it cannot be used (a description for the error page or invalid_client). */
export async function resolveMetadataClient(deps: Deps, clientId: string): Promise<Checked<Application>> {
  if (!deps.config.clientIdMetadata) return { ok: false, description: 'this service does not accept client ID metadata documents; use a registered application’s client_id' };
  const url = checkMetadataUrl(clientId, deps.config.outboundAllowPrivate);
  if (!url.ok) return url;
  const now = deps.clock.now();
  const cache = cacheOf(deps);
  const cached = cache.get(clientId);
  if (cached && cached.expiresAt > now) {
    const app = await findApplicationByClientId(deps, cached.applicationId);
    if (app) return { ok: true, value: app };
  }
  cache.delete(clientId);

  const fetched = await fetchDocument(deps, clientId);
  if (!fetched.ok) return fetched;
  const app = await applicationFor(deps, url.value, fetched.value.metadata, now);
  if (!app.ok) return app;
  if (cache.size >= CACHE_ENTRIES_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(clientId, { applicationId: app.value.id, expiresAt: now + fetched.value.lifetimeMs });
  return app;
}

/** The document's URL when `app` stands for one (the consent screen names its host), else undefined. */
export function metadataDocumentUrl(deps: Deps, app: Application): Promise<string | undefined> {
  if (app.ownerId !== REGISTRATION_OWNER_ID) return Promise.resolve(undefined);
  return findDocumentUrl(deps.db, app.id);
}

/** At most this many applications' client_ids are remembered per running service. */
const CLIENT_ID_CACHE_MAX = 10_000;
const clientIds = new WeakMap<OutboundClient, Map<string, string>>();

/**
 * The client_id an OAuth client knows itself by, for what Gatehouse shows to clients and resource
 * servers (the ID token's `aud`, introspection's and a JWT access token's `client_id`): for a
 * client ID metadata document's application, the document's URL (draft-ietf-oauth-client-id-metadata-document
 * §3: the URL is the client identifier), else the application's id. An application's document URL
 * never changes, so it is remembered (a bounded per-service map: no query on the hot paths of
 * introspection or ID token issuance after the first).
 */
export async function oauthClientId(deps: Deps, applicationId: string): Promise<string> {
  let cache = clientIds.get(deps.outbound);
  if (!cache) {
    cache = new Map();
    clientIds.set(deps.outbound, cache);
  }
  const known = cache.get(applicationId);
  if (known !== undefined) return known;
  const clientId = (await findDocumentUrl(deps.db, applicationId)) ?? applicationId;
  if (cache.size >= CLIENT_ID_CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(applicationId, clientId);
  return clientId;
}

/** The application id a client_id names: a document URL's application (if seen), or the client_id itself. */
export async function applicationIdOf(deps: Deps, clientId: string): Promise<string> {
  if (!clientId.startsWith('https://') && !clientId.startsWith('http://')) return clientId;
  return (await findDocumentApplicationId(deps.db, clientId)) ?? clientId;
}

async function fetchDocument(deps: Deps, clientId: string): Promise<Checked<{ metadata: DocumentMetadata; lifetimeMs: number }>> {
  let response;
  try {
    response = await deps.outbound.request(clientId, { method: 'GET', headers: { accept: 'application/json' }, timeoutMs: FETCH_TIMEOUT_MS, maxBytes: DOCUMENT_MAX_BYTES });
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    return { ok: false, description: fetchFailure(error) };
  }
  // Draft §4: redirects are not followed; the document lives at the client_id itself.
  if (response.status >= 300 && response.status < 400) return { ok: false, description: `the client metadata document redirected (HTTP ${response.status}); it must be served at the client_id URL itself` };
  if (response.status !== 200) return { ok: false, description: `the client metadata document could not be fetched (HTTP ${response.status})` };
  const checked = checkMetadataDocument(response.body, response.headers['content-type'], clientId, deps.config.serviceName);
  if (!checked.ok) return checked;
  return { ok: true, value: { metadata: checked.value, lifetimeMs: documentLifetimeMs(response.headers['cache-control']) } };
}

function fetchFailure(error: OutboundError): string {
  switch (error.reason) {
    case 'too-large':
      return `the client metadata document is larger than ${DOCUMENT_MAX_BYTES} bytes`;
    case 'timeout':
      return `the client metadata document did not arrive within ${FETCH_TIMEOUT_MS / 1000} seconds`;
    case 'forbidden-address':
      return 'the client metadata document’s host is not a public address';
    case 'invalid-url':
      return 'the client_id is not a URL that can be fetched';
    default:
      return 'the client metadata document could not be fetched (the connection failed)';
  }
}

/**
 * The application for `location`, created on first sight, or brought up to date with the document.
 * New applications are limited per host (NEW_DOCUMENTS_PER_HOST_PER_HOUR): anyone can name any URL
 * as a client_id without signing in, and each new one is a row. Known documents are never limited.
 */
async function applicationFor(deps: Deps, location: URL, metadata: DocumentMetadata, now: number): Promise<Checked<Application>> {
  const url = location.href;
  const iconUrl = metadata.logo_uri ?? null;
  const knownId = await findDocumentApplicationId(deps.db, url);
  const known = knownId !== undefined ? await findApplicationByClientId(deps, knownId) : undefined;
  if (known) {
    const changed = known.name !== metadata.client_name || known.iconUrl !== iconUrl || known.redirectUris.join('\n') !== metadata.redirect_uris.join('\n');
    await deps.db.transaction().execute(async (trx) => {
      if (changed) await updateApplicationIn(trx, known.id, { name: metadata.client_name, iconUrl, redirectUris: metadata.redirect_uris }, now);
      await touchDocument(trx, url, now);
    });
    return { ok: true, value: changed ? { ...known, name: metadata.client_name, iconUrl, redirectUris: metadata.redirect_uris, updatedAt: now } : known };
  }
  const decision = await deps.buckets.take(`client-metadata:host:${location.hostname}`, NEW_DOCUMENTS_RULE, now);
  if (!decision.allowed) {
    return { ok: false, description: `more than ${NEW_DOCUMENTS_PER_HOST_PER_HOUR} new clients from ${location.hostname} were seen in the last hour; try again in ${Math.max(1, Math.ceil(decision.resetAfterMs / 60_000))} minutes` };
  }
  const application: Application = {
    id: deps.ids.next(),
    ownerId: REGISTRATION_OWNER_ID,
    name: metadata.client_name,
    description: '',
    iconUrl,
    // Draft §4, RFC 8252: a document holds no secret, so its client is public (PKCE required).
    confidential: false,
    clientSecretHash: null,
    redirectUris: metadata.redirect_uris,
    // Issue #41 §3: a client nobody reviewed never gets a bot.
    botPublic: false,
    botRequireCodeGrant: false,
    botUserId: null,
    createdAt: now,
    updatedAt: now,
    disabledAt: null,
    disabledReason: null,
  };
  try {
    await deps.db.transaction().execute(async (trx) => {
      await insertApplicationIn(trx, application);
      await insertDocument(trx, { url, applicationId: application.id, fetchedAt: now });
    });
    return { ok: true, value: application };
  } catch (error) {
    // Another request (or instance) created it first: theirs is the one.
    const winnerId = await findDocumentApplicationId(deps.db, url);
    const winner = winnerId !== undefined ? await findApplicationByClientId(deps, winnerId) : undefined;
    if (winner) return { ok: true, value: winner };
    throw error;
  }
}
