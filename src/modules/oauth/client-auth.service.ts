import type { Acting, Who } from '../../core/acting.js';
import { OAuthError } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { emitted } from '../../events/event-bus.js';
import { addressBlock } from '../accounts/sign-in-throttle.js';
import { verifyClientSecret, type Application } from '../applications/applications.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import { isUrlClientId } from '../client-metadata/client-metadata.js';
import { metadataDocumentUrl, resolveMetadataClient } from '../client-metadata/client-metadata.service.js';
import { CLIENT_ADDRESS_FAILURE_RULE, readClientCredentials, type ClientAuthMethod, type PresentedClientAuth } from './client-auth.js';

/**
 * Client authentication at every endpoint that takes client credentials (token, revocation, and
 * any a new grant adds; issue #37 §3): the lookups and the failure throttle around client-auth.ts's
 * pure reading of what the request presents.
 */

/** An authenticated client (or an identified public one) and how it authenticated. */
export interface AuthenticatedClient {
  app: Application;
  method: ClientAuthMethod;
}

function wwwAuthenticate(deps: Deps): Record<string, string> {
  const realm = deps.config.serviceName.replace(/["\\]/g, '');
  return { 'WWW-Authenticate': `Basic realm="${realm}", charset="UTF-8"` };
}

/** Issue #39: what introspection and revocation tell a client the operator disabled. */
export const DISABLED_CLIENT = 'this application is disabled by the operator of this service';

/** RFC 6749 §5.2: invalid_client is a 401 and always names the scheme to use (RFC 9110 §15.5.2). */
export function invalidClient(deps: Deps, description: string): OAuthError {
  return new OAuthError('invalid_client', description, 401, wwwAuthenticate(deps));
}

/**
 * Authenticates the client of a token or revocation request (RFC 6749 §2.3, §3.2.1;
 * OAUTH-CHECKLIST D3–D8, D10, D12): HTTP Basic, client_secret_post, or client_id alone for a
 * public app. Failures are counted per address only (client-auth.ts: client ids are public and
 * secrets unguessable, so a per-client count would only let strangers lock an app out) and
 * refused beyond the limit with 429 `temporarily_unavailable` and Retry-After. `acting` is the
 * request (nobody known yet); its address is the one counted. Issue #37 §2: each counted failure
 * (a wrong secret, an unknown client) is audited as client.auth_failed with the method tried.
 */
export async function authenticateClient(deps: Deps, acting: Acting<Who>, presented: PresentedClientAuth): Promise<AuthenticatedClient> {
  const now = deps.clock.now();
  const addressKey = `oauth-client-auth:address:${addressBlock(acting.address ?? '')}`;
  const read = readClientCredentials(presented);

  // D10: an address with too many failures is refused before anything it presents is checked.
  const refuseBlockedAddress = async (): Promise<void> => {
    const byAddress = await deps.buckets.peek(addressKey, CLIENT_ADDRESS_FAILURE_RULE, now);
    if (byAddress.allowed) return;
    const seconds = Math.max(1, Math.ceil(byAddress.resetAfterMs / 1000));
    throw new OAuthError('temporarily_unavailable', `too many failed client authentications; retry in ${seconds} seconds`, 429, { 'Retry-After': String(seconds) });
  };

  /** `counted`: a wrong secret or an unknown client; a request that presented no secret at all guessed nothing (issue #21 §2). */
  const fail = async (description: string, audited?: { applicationId: string | null; method: ClientAuthMethod }): Promise<never> => {
    if (audited) {
      await deps.buckets.take(addressKey, CLIENT_ADDRESS_FAILURE_RULE, now);
      await emitted(deps, acting, { type: 'client.auth_failed', applicationId: audited.applicationId, method: audited.method });
    }
    throw invalidClient(deps, description);
  };

  if (!read.ok) {
    await refuseBlockedAddress();
    if (read.error === 'invalid_request') throw new OAuthError('invalid_request', read.description);
    return fail(read.description, { applicationId: null, method: read.viaHeader ? 'client_secret_basic' : 'none' });
  }
  const { credentials } = read;
  // Issue #41 §3: a URL is a client ID metadata document's client: public, so it presents no
  // secret, and a document that cannot be fetched or verified now is invalid_client.
  if (isUrlClientId(credentials.clientId)) {
    if (credentials.clientSecret !== undefined) return fail('a client identified by a metadata document is public and has no client secret; send client_id only');
    const resolved = await resolveMetadataClient(deps, credentials.clientId);
    if (!resolved.ok) return fail(resolved.description);
    return { app: resolved.value, method: 'none' };
  }
  // Malformed ids never reach SQL as anything but a valid 64-bit number.
  if (!isSnowflake(credentials.clientId)) {
    await refuseBlockedAddress();
    return fail('unknown client_id', { applicationId: null, method: credentials.method });
  }
  const found = await findApplicationByClientId(deps, credentials.clientId);
  // An application standing for a metadata document answers to the document's URL only.
  const app = found && (await metadataDocumentUrl(deps, found)) === undefined ? found : undefined;
  // A public client presenting its client_id alone guesses nothing (its id is public), so its
  // address's failures do not concern it: no bucket is read, which on Redis is one round trip
  // fewer on every public client's grant (issue #26 §1). Everything else is judged as before.
  if (app && !app.confidential && credentials.clientSecret === undefined) return { app, method: credentials.method };
  await refuseBlockedAddress();
  if (!app) return fail('unknown client_id', { applicationId: null, method: credentials.method });
  if (app.confidential) {
    // RFC 6749 §3.2.1, §4.1.3 (D7): a client that has a secret must authenticate with it.
    if (credentials.clientSecret === undefined) return fail('this client is confidential: authenticate with its client secret');
    if (!verifyClientSecret(app, credentials.clientSecret)) return fail('client authentication failed', { applicationId: app.id, method: credentials.method });
  } else {
    // A public app has no secret, so any secret presented for it is wrong.
    return fail('this client is public and has no client secret; send client_id only', { applicationId: app.id, method: credentials.method });
  }
  return { app, method: credentials.method };
}
