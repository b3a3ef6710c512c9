import { ApiErrors } from '../../core/errors.js';
import { hashSecret, hasPrefix } from '../../core/secrets.js';
import type { Deps } from '../../services.js';
import { getPerson } from '../accounts/accounts.service.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import { listServersForPerson } from '../directory/servers.service.js';
import { findAccessToken } from './tokens.repository.js';

/** A valid access token presented as `Authorization: Bearer …` (SPEC §5.1). */
export interface BearerToken {
  grantId: string;
  applicationId: string;
  userId: string;
  scopes: string[];
  expiresAt: number;
}

/**
 * The access token behind a bearer credential, or undefined when it is unknown, expired or
 * revoked (revocation deletes the rows). One primary-key lookup: this runs on every bearer
 * request (DESIGN §5).
 */
export async function authenticateBearer(deps: Deps, token: string): Promise<BearerToken | undefined> {
  if (!hasPrefix(token, 'accessToken')) return undefined;
  const stored = await findAccessToken(deps.db, hashSecret(token));
  if (!stored || stored.expiresAt <= deps.clock.now()) return undefined;
  return stored;
}

/** The user record of GET /users/@me (SPEC §2.5): identify, plus e-mail with the email scope. */
export interface UserRecord {
  id: string;
  username: string;
  name: string;
  avatarUrl: string | null;
  email?: string | null;
  verified?: boolean;
}

/** GET /api/v1/oauth2/@me (SPEC §2.7). */
export interface AuthorizationInfo {
  application: { id: string; name: string; iconUrl: string | null; description: string; botPublic: boolean; botRequireCodeGrant: boolean };
  scopes: string[];
  /** ISO 8601 expiry of the presented access token. */
  expires: string;
  user?: UserRecord;
}

/** A server of GET /users/@me/servers (SPEC §2.6), in Discord's partial-guild shape. */
export interface ServerEntry {
  id: string;
  name: string;
  iconUrl: string | null;
  owner: boolean;
  /** The person's permissions there, as a decimal string (64-bit). */
  permissions: string;
}

async function userRecord(deps: Deps, bearer: BearerToken): Promise<UserRecord> {
  const person = await getPerson(deps, bearer.userId);
  // The person was deleted between the token lookup and now (their grants go with them).
  if (!person) throw ApiErrors.unauthorized();
  const record: UserRecord = { id: person.id, username: person.username, name: person.name, avatarUrl: person.avatarUrl };
  if (bearer.scopes.includes('email')) {
    record.email = person.email;
    record.verified = person.emailVerified;
  }
  return record;
}

/** GET /api/v1/users/@me; the caller has checked the identify scope. */
export async function currentUser(deps: Deps, bearer: BearerToken): Promise<UserRecord> {
  return userRecord(deps, bearer);
}

/** GET /api/v1/oauth2/@me: the application, the token's scopes and expiry, and the user with identify. */
export async function describeAuthorization(deps: Deps, bearer: BearerToken): Promise<AuthorizationInfo> {
  const app = await findApplicationByClientId(deps, bearer.applicationId);
  if (!app) throw ApiErrors.unauthorized();
  const info: AuthorizationInfo = {
    application: {
      id: app.id,
      name: app.name,
      iconUrl: app.iconUrl,
      description: app.description,
      botPublic: app.botPublic,
      botRequireCodeGrant: app.botRequireCodeGrant,
    },
    scopes: bearer.scopes,
    expires: new Date(bearer.expiresAt).toISOString(),
  };
  if (bearer.scopes.includes('identify')) info.user = await userRecord(deps, bearer);
  return info;
}

/** GET /api/v1/users/@me/servers; the caller has checked the servers scope. */
export async function serversOfBearer(deps: Deps, bearer: BearerToken): Promise<ServerEntry[]> {
  const servers = await listServersForPerson(deps, bearer.userId);
  return servers.map((s) => ({ id: s.id, name: s.name, iconUrl: s.iconUrl, owner: s.ownerId === bearer.userId, permissions: s.permissions.toString() }));
}
