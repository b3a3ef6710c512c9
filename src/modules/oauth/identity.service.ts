import { appEndpointsOf } from '../app-events/app-events.service.js';
import { ApiErrors } from '../../core/errors.js';
import { hashSecret, hasPrefix } from '../../core/secrets.js';
import type { Deps } from '../../deps.js';
import { getPerson } from '../accounts/accounts.service.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import type { BotPrincipal } from '../applications/bots.service.js';
import { listServersForPerson } from '../directory/servers.service.js';
import type { Person } from '../directory/people.js';
import { findBearer, findBearerWithPerson } from './tokens.repository.js';
import {
  presentApplication,
  presentCurrentUser,
  presentPartialGuild,
  presentUser,
  type ApplicationResource,
  type AuthorizationResource,
  type PartialGuildResource,
  type UserResource,
} from '../resources/resources.js';

/** A valid access token presented as `Authorization: Bearer …` (SPEC §5.1). */
export interface BearerToken {
  grantId: string;
  applicationId: string;
  userId: string;
  scopes: string[];
  expiresAt: number;
  /** The person, when the check read it with the token (authenticateBearerWithPerson). */
  person?: Person;
  /** Always null here: tokens for other APIs are refused (issue #41). */
  resourceServerId: string | null;
}

/**
 * The access token behind a bearer credential, or undefined when it is unknown, expired or
 * revoked (revocation deletes the rows). One primary-key lookup, or none while the instance
 * remembers it (tokens.repository.ts findBearer): this runs on every bearer request (DESIGN §5).
 */
export async function authenticateBearer(deps: Deps, token: string): Promise<BearerToken | undefined> {
  if (!hasPrefix(token, 'accessToken')) return undefined;
  const stored = await findBearer(deps.db, hashSecret(token));
  // Expiry is checked on every use, remembered or not. RFC 8707 (issue #41): a token for another
  // API (a resource server's audience) is no token here.
  if (!stored || stored.expiresAt <= deps.clock.now() || stored.resourceServerId !== null) return undefined;
  return stored;
}

/**
 * authenticateBearer for a route that answers with the person (GET /users/@me): the repository
 * reads the token with its person where that saves a round trip (findBearerWithPerson).
 */
export async function authenticateBearerWithPerson(deps: Deps, token: string): Promise<BearerToken | undefined> {
  if (!hasPrefix(token, 'accessToken')) return undefined;
  const found = await findBearerWithPerson(deps.db, hashSecret(token));
  if (!found || found.expiresAt <= deps.clock.now() || found.resourceServerId !== null) return undefined;
  return found;
}

/** The user record of GET /users/@me (SPEC §2.5): Discord's user object (resources.ts). */
export type UserRecord = UserResource;

/** GET /api/v1/oauth2/@me (SPEC §2.7). */
export type AuthorizationInfo = AuthorizationResource;

/** A server of GET /users/@me/servers (SPEC §2.6): Discord's partial guild. */
export type ServerEntry = PartialGuildResource;

async function userRecord(deps: Deps, bearer: BearerToken): Promise<UserRecord> {
  const person = bearer.person ?? (await getPerson(deps, bearer.userId));
  // The person was deleted between the token lookup and now (their grants go with them).
  if (!person) throw ApiErrors.unauthorized();
  // SPEC §2.5: identify gives the name, username and avatar; email adds the e-mail.
  // Issue #38 §4: Discord's mfa_enabled, from the person's row the bearer check read (no statement of its own).
  return presentCurrentUser({ ...person, mfaEnabled: !person.bot && person.mfaEnabled === true }, bearer.scopes.includes('email'));
}

/** A person's /users/@me body, valid for as long as the lookup returns that same person object. */
interface WrittenUser {
  person: Person;
  body: string;
}

/** Bodies per person id, without and with the email scope; each bound like the row cache's lookups. */
const WRITTEN_USERS = [new Map<string, WrittenUser>(), new Map<string, WrittenUser>()] as const;
const WRITTEN_USERS_MAX = 20_000;

/**
 * GET /api/v1/users/@me as the JSON the route sends; the caller has checked the identify scope.
 * On SQLite the row cache answers the person's lookup with one frozen object while nothing could
 * have changed its row (any write to `users` but a plain INSERT ends its generation: docs/performance.md §Row cache),
 * so the body presented and written for that object is the body for the same object next time:
 * the bearer check still runs on every request, only presenting and serialising are skipped
 * (§Issue #43 §2). A lookup that reads the row
 * again (a new generation; PostgreSQL, which has no row cache) returns a new object, which misses
 * and replaces the entry. Keyed by id, not a WeakMap: a WeakMap entry per request on PostgreSQL
 * would be an ephemeron for the collector to weigh (§Request hooks).
 */
export async function currentUserBody(deps: Deps, bearer: BearerToken): Promise<string> {
  const person = bearer.person ?? (await getPerson(deps, bearer.userId));
  if (!person) throw ApiErrors.unauthorized();
  const written = WRITTEN_USERS[bearer.scopes.includes('email') ? 1 : 0];
  const found = written.get(person.id);
  if (found !== undefined && found.person === person) return found.body;
  const body = JSON.stringify(await userRecord(deps, { ...bearer, person }));
  if (found === undefined && written.size >= WRITTEN_USERS_MAX) written.clear();
  written.set(person.id, { person, body });
  return body;
}

/** GET /api/v1/oauth2/@me: the application, the token's scopes and expiry, and the user with identify. */
export async function describeAuthorization(deps: Deps, bearer: BearerToken): Promise<AuthorizationInfo> {
  const app = await findApplicationByClientId(deps, bearer.applicationId);
  if (!app) throw ApiErrors.unauthorized();
  const info: AuthorizationInfo = {
    application: presentApplication(app, await appEndpointsOf(deps, app.id)),
    scopes: bearer.scopes,
    expires: new Date(bearer.expiresAt).toISOString(),
  };
  if (bearer.scopes.includes('identify')) info.user = await userRecord(deps, bearer);
  return info;
}

/** GET /api/v1/users/@me/servers; the caller has checked the servers scope. */
export async function serversOfBearer(deps: Deps, bearer: BearerToken): Promise<ServerEntry[]> {
  const servers = await listServersForPerson(deps, bearer.userId);
  return servers.map((s) => presentPartialGuild(s, s.ownerId === bearer.userId, s.permissions));
}

/** GET /api/v1/users/@me with `Authorization: Bot` (DESIGN §1): the bot's own user, as on Discord. */
export async function botUser(deps: Deps, bot: BotPrincipal): Promise<UserRecord> {
  const account = await getPerson(deps, bot.botUserId);
  if (!account) throw ApiErrors.unauthorized();
  // Discord's @me carries mfa_enabled; a bot has no second factor.
  return { ...presentUser(account), mfa_enabled: false };
}

/**
 * GET /api/v1/applications/@me and /api/v1/oauth2/applications/@me with `Authorization: Bot`
 * (DESIGN §1): the bot's application with its owner and bot user, as Discord answers them.
 */
export async function botApplication(deps: Deps, bot: BotPrincipal): Promise<ApplicationResource> {
  const [owner, account, endpoints] = await Promise.all([getPerson(deps, bot.application.ownerId), getPerson(deps, bot.botUserId), appEndpointsOf(deps, bot.application.id)]);
  const application = presentApplication(bot.application, endpoints, true);
  if (owner) application.owner = presentUser(owner);
  if (account) application.bot = presentUser(account);
  return application;
}
