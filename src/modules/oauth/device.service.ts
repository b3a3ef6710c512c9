import type { Acting, Who } from '../../core/acting.js';
import type { PersonActor } from '../../core/actor.js';
import { MINUTE } from '../../core/clock.js';
import { OAuthError } from '../../core/errors.js';
import { describeScope, formatScopes, INSTALL_SCOPES, parseScope } from '../../core/scopes.js';
import { hashSecret, issueSecret } from '../../core/secrets.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import type { BucketRule } from '../../rate-limit/bucket.js';
import { isUniqueViolation } from '../../storage/types.js';
import { addressBlock } from '../accounts/sign-in-throttle.js';
import { getPerson } from '../accounts/accounts.service.js';
import type { Application } from '../applications/applications.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import { isRegisteredApplication } from '../client-registration/client-registration.js';
import { metadataHost } from '../client-metadata/client-metadata.js';
import { metadataDocumentUrl } from '../client-metadata/client-metadata.service.js';
import { sessionMethods } from '../mfa/mfa.service.js';
import { isOpenIdScope, recordOpenIdGrant } from '../oidc/oidc.service.js';
import { parseResourceScope } from '../resource-servers/resource-servers.js';
import { delegatedView } from './delegation.js';
import { resolveResource, type ResourceServer } from '../resource-servers/resource-servers.service.js';
import type { ConsentView } from './authorize.page.js';
import { authenticateClient } from './client-auth.service.js';
import { answerDeviceCode, findDeviceCodeByUserCode, insertDeviceCode, type DeviceCode } from './device-codes.repository.js';
import { DEVICE_CODE_LIFETIME_MS, DEVICE_POLL_INTERVAL_S, displayUserCode, drawUserCode, normaliseUserCode } from './device.js';
import type { TokenParams } from './grants/grant.js';
import { targetResource } from './grants/resource.js';
import { insertGrant } from './grants.repository.js';
import { WEBHOOK_INCOMING_SCOPE } from './incoming-webhook.js';

/** Where the person types the user code (RFC 8628 §3.2 verification_uri). */
export const ACTIVATE_PATH = '/activate';

/** The parameters the device authorization endpoint reads (each refused when repeated, as at the token endpoint). */
export const DEVICE_AUTHORIZATION_PARAMETERS: readonly string[] = ['client_id', 'client_secret', 'scope', 'resource'];

/** RFC 8628 §3.2 device authorization response. */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** Scopes that write something at the code exchange (installs, issue #4; webhook.incoming, issue #23): the code flow's alone. */
const BROWSER_ONLY_SCOPES: readonly string[] = [...INSTALL_SCOPES, WEBHOOK_INCOMING_SCOPE];


/**
 * POST /api/oauth2/device/authorize (RFC 8628 §3.1–3.2; issue #41 §2): authenticates the client as
 * the token endpoint does, validates scope and resource as the code flow does, and stores a device
 * code (hashed, DESIGN §3) with its user code (hashed too). `acting` is the request: nobody known.
 * Nothing is recorded: a request nobody answered changes nothing anyone owns; the answer is audited.
 */
export async function startDeviceAuthorization(deps: Deps, acting: Acting<Who>, request: { params: TokenParams; authorization: string | undefined }): Promise<DeviceAuthorizationResponse> {
  const p = request.params;
  const { app } = await authenticateClient(deps, acting, { authorization: request.authorization, clientId: p['client_id'], clientSecret: p['client_secret'] });
  // RFC 6749 §5.2: the client is known, but may not ask for anything now (issue #39).
  if (app.disabledAt !== null) throw new OAuthError('unauthorized_client', 'this application is disabled by the operator of this service');
  const server = await targetResource(deps, p['resource']);
  const scopes = deviceScopes(server, p['scope']);
  const now = deps.clock.now();
  const device = issueSecret(deps.random, 'deviceCode');
  for (let attempt = 0; ; attempt++) {
    const userCode = drawUserCode((n) => deps.random.bytes(n));
    try {
      await insertDeviceCode(deps.db, {
        deviceCodeHash: device.hash,
        userCodeHash: hashSecret(userCode),
        applicationId: app.id,
        scopes,
        resourceServerId: server?.id ?? null,
        resource: server ? (p['resource'] ?? null) : null,
        createdAt: now,
        expiresAt: now + DEVICE_CODE_LIFETIME_MS,
        intervalSeconds: DEVICE_POLL_INTERVAL_S,
      });
      const base = deps.config.baseUrl;
      return {
        device_code: device.plain,
        user_code: displayUserCode(userCode),
        verification_uri: `${base}${ACTIVATE_PATH}`,
        verification_uri_complete: `${base}${ACTIVATE_PATH}?user_code=${displayUserCode(userCode)}`,
        expires_in: Math.floor(DEVICE_CODE_LIFETIME_MS / 1000),
        interval: DEVICE_POLL_INTERVAL_S,
      };
    } catch (error) {
      // A user code already in use (1 in 20^8 per live code): draw another, a few times at most.
      if (!isUniqueViolation(error) || attempt >= 3) throw error;
    }
  }
}

/** The scopes of a device request: a resource server's (RFC 8707), or Gatehouse's own, never a browser-only one. */
function deviceScopes(server: ResourceServer | undefined, raw: string | undefined): string[] {
  if (server) {
    const scope = parseResourceScope(server, raw);
    if (!scope.ok) throw new OAuthError('invalid_scope', scope.reason);
    return scope.scopes;
  }
  if (raw === undefined) throw new OAuthError('invalid_scope', 'scope is required: name at least one scope');
  const scope = parseScope(raw);
  if (!scope.ok) throw new OAuthError('invalid_scope', scope.reason);
  const browserOnly = scope.scopes.find((s) => BROWSER_ONLY_SCOPES.includes(s));
  if (browserOnly !== undefined) throw new OAuthError('invalid_scope', `${browserOnly} needs the authorization code flow in a browser: it is not available to devices`);
  return scope.scopes;
}

/**
 * RFC 8628 §5.1: user codes are short, so guesses are limited — failed look-ups per address and
 * per person, 10 per 10 minutes each (a person mistyping twice is far below).
 */
const USER_CODE_GUESS_RULE: BucketRule = { limit: 10, windowMs: 10 * MINUTE };

/** What /activate shows next. */
export type ActivateOutcome =
  /** The code form again, saying why. */
  | { kind: 'form'; status: number; message: string; typed: string }
  | { kind: 'consent'; view: ConsentView }
  /** The person answered: the page says what the device will get. */
  | { kind: 'answered'; approved: boolean; applicationName: string };

/** RFC 8628 §5.1: one answer for an unknown, expired or answered code, so a guess learns nothing. */
const NO_SUCH_CODE = 'That code is not valid or has expired. Check the code on your device and try again; if it has expired, start again on the device.';

interface Found {
  code: DeviceCode;
  app: Application;
  resource: ResourceServer | undefined;
  userCode: string;
}

/** The pending request a typed code names, or the form's refusal; each miss counts as a guess. */
async function findTyped(deps: Deps, acting: Acting<PersonActor>, typed: string): Promise<Found | ActivateOutcome> {
  const now = deps.clock.now();
  const keys = [`device-user-code:address:${addressBlock(acting.address ?? '')}`, `device-user-code:person:${acting.actor.id}`];
  for (const key of keys) {
    const state = await deps.buckets.peek(key, USER_CODE_GUESS_RULE, now);
    if (!state.allowed) {
      const minutes = Math.max(1, Math.ceil(state.resetAfterMs / MINUTE));
      return { kind: 'form', status: 429, message: `Too many codes that did not work. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, typed };
    }
  }
  const miss = async (): Promise<ActivateOutcome> => {
    for (const key of keys) await deps.buckets.take(key, USER_CODE_GUESS_RULE, now);
    return { kind: 'form', status: 400, message: NO_SUCH_CODE, typed };
  };
  const userCode = normaliseUserCode(typed);
  if (userCode === undefined) return miss();
  const code = await findDeviceCodeByUserCode(deps.db, hashSecret(userCode));
  if (!code || code.status !== 'pending' || code.expiresAt <= now) return miss();
  const app = await findApplicationByClientId(deps, code.applicationId);
  if (!app || app.disabledAt !== null) return miss();
  let resource: ResourceServer | undefined;
  if (code.resource !== null) {
    const target = await resolveResource(deps, code.resource);
    // The API was removed since the device asked: the request cannot be granted any more.
    if (target.kind !== 'resource' || target.server.id !== code.resourceServerId) return miss();
    resource = target.server;
  }
  return { code, app, resource, userCode };
}

/**
 * /activate with a typed code (RFC 8628 §3.3): the consent screen for that device's request, for
 * the signed-in person. `acting` is that person's request (its address counts the guesses).
 */
export async function showDeviceConsent(deps: Deps, acting: Acting<PersonActor>, typed: string): Promise<ActivateOutcome> {
  const found = await findTyped(deps, acting, typed);
  if ('kind' in found) return found;
  return { kind: 'consent', view: await deviceConsentView(deps, found) };
}

/**
 * The consent screen's answer for a device (RFC 8628 §3.3; issue #41 §2): Allow stores the grant
 * (and, with openid, the sign-in its ID tokens repeat) and marks the request approved, recording
 * grant.created; Cancel marks it denied, recording device.denied. Both only while it is pending
 * and unexpired, in one transaction. The route's CSRF check has passed.
 */
export async function answerDevice(
  deps: Deps,
  acting: Acting<PersonActor>,
  input: { typed: string; decision: unknown; signedInAt: number | undefined; sessionToken: string | undefined },
): Promise<ActivateOutcome> {
  if (input.decision !== 'authorize' && input.decision !== 'cancel') return { kind: 'form', status: 400, message: 'Choose Authorize or Cancel on the consent screen.', typed: input.typed };
  const found = await findTyped(deps, acting, input.typed);
  if ('kind' in found) return found;
  const { code, app } = found;
  const userId = acting.actor.id;
  const now = deps.clock.now();
  const approved = input.decision === 'authorize';
  const amr = approved && isOpenIdScope(code.scopes) ? await sessionMethods(deps, input.sessionToken) : undefined;
  const answered = await changing(deps, acting, async (trx, emit) => {
    const grantId = approved ? deps.ids.next() : null;
    if (!(await answerDeviceCode(trx, code.deviceCodeHash, { status: approved ? 'approved' : 'denied', userId, grantId }, now))) return false;
    if (grantId !== null) {
      await insertGrant(trx, { id: grantId, applicationId: app.id, userId, scopes: code.scopes, createdAt: now, serverId: null, permissions: null, resourceServerId: code.resourceServerId, delegatedScopes: found.resource?.delegatedScopes ?? [] });
      // OpenID Connect Core §2: the ID token's auth_time and amr are this sign-in's; a device sends no nonce.
      if (amr) await recordOpenIdGrant(trx, grantId, { nonce: null, authTime: input.signedInAt ?? now, amr, acr: null });
      emit({ type: 'grant.created', applicationId: app.id, userId, scopes: formatScopes(code.scopes) });
    } else {
      emit({ type: 'device.denied', applicationId: app.id, userId });
    }
    return true;
  });
  // Answered (or expired) by a concurrent submission meanwhile: the same answer as for any stale code.
  if (!answered) return { kind: 'form', status: 400, message: NO_SUCH_CODE, typed: input.typed };
  return { kind: 'answered', approved, applicationName: app.name };
}

async function deviceConsentView(deps: Deps, found: Found): Promise<ConsentView> {
  const { app, code, resource, userCode } = found;
  const owner = await getPerson(deps, app.ownerId);
  const server = resource ? (resource.applicationId === app.id ? app : await findApplicationByClientId(deps, resource.applicationId)) : undefined;
  const describe = (name: string) => (resource ? (resource.scopes.find((s) => s.name === name)?.description ?? name) : describeScope(name));
  const shown = displayUserCode(userCode);
  // Issue #41 §3: a client ID metadata document's client is known by its host, as on the code flow's screen.
  const documentUrl = await metadataDocumentUrl(deps, app);
  return {
    application: {
      id: app.id,
      name: app.name,
      description: app.description,
      ownerUsername: owner?.username ?? null,
      registered: isRegisteredApplication(app),
      ...(documentUrl !== undefined ? { metadataDocument: { url: documentUrl, host: metadataHost(documentUrl) } } : {}),
    },
    scopes: code.scopes.map((name) => ({ name, description: describe(name) })),
    ...(resource ? { resource: { identifier: resource.identifier, applicationName: server?.name ?? 'another application' } } : {}),
    ...(resource ? delegatedView(resource, server?.name) : {}),
    fields: [['user_code', shown]],
    subject: { action: ACTIVATE_PATH, returnUrl: `${ACTIVATE_PATH}?user_code=${shown}`, redirectUri: undefined },
    device: { userCode: shown },
  };
}
