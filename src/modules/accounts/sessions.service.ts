import { HOUR } from '../../core/clock.js';
import { hashSecret, issueSecret } from '../../core/secrets.js';
import type { Kysely, Transaction } from 'kysely';
import type { Acting, Who } from '../../core/acting.js';
import type { PersonActor } from '../../core/actor.js';
import type { Deps } from '../../deps.js';
import type { Database } from '../../storage/database.js';
import { changing, emitted } from '../../events/event-bus.js';
import type { Person } from '../directory/people.js';
import { deleteSession, deleteSessionOfUser, deleteSessionsOfUser, findSessionWithPerson, insertSession, listSessionsOfUser, touchSession } from './sessions.repository.js';
import { deviceOf, type SessionView } from './sessions.js';
import { invalidField } from '../../core/errors.js';

/** Refresh last-seen at most hourly: a write per page view would be wasted work. */
const TOUCH_INTERVAL_MS = HOUR;

export interface StartedSession {
  /** The cookie value; shown to the browser only. */
  token: string;
  expiresAt: number;
}

function expiryFor(deps: Deps, createdAt: number, lastSeenAt: number): number {
  return Math.min(createdAt + deps.config.sessionMaxAgeMs, lastSeenAt + deps.config.sessionIdleMs);
}

/**
 * Starts a session for the person acting, who has just proved who they are (signed up, or a
 * sign-in: startSessionIn); the token goes in the cookie only.
 */
export function startSession(deps: Deps, acting: Acting<PersonActor>, userAgent: string | null): Promise<StartedSession> {
  return startSessionIn(deps, acting, deps.db, userAgent);
}

/** startSession inside the caller's transaction (a sign-in records signin.succeeded in the session's own commit). */
export async function startSessionIn(deps: Deps, acting: Acting<PersonActor>, db: Kysely<Database> | Transaction<Database>, userAgent: string | null): Promise<StartedSession> {
  const now = deps.clock.now();
  const secret = issueSecret(deps.random, 'session');
  const expiresAt = expiryFor(deps, now, now);
  await insertSession(db, {
    idHash: secret.hash,
    userId: acting.actor.id,
    createdAt: now,
    lastSeenAt: now,
    expiresAt,
    userAgent: userAgent ? userAgent.slice(0, 256) : null,
    // Issue #38 §5: Settings → Sessions shows where each session signed in from.
    address: acting.address ? acting.address.slice(0, 64) : null,
  });
  return { token: secret.plain, expiresAt };
}

export interface ResolvedSession {
  person: Person;
  expiresAt: number;
  /** True when this use pushed the idle expiry forward, so the cookie's Max-Age should follow. */
  renewed: boolean;
  /** When the person signed in to this session (OpenID Connect auth_time, issue #22). */
  signedInAt: number;
}

/**
 * The person behind a session cookie, or undefined when the session is unknown or expired
 * (absolute age or idle time, whichever ends first). An expired session is deleted.
 */
export async function resolveSession(deps: Deps, token: string): Promise<ResolvedSession | undefined> {
  const idHash = hashSecret(token);
  const found = await findSessionWithPerson(deps.db, idHash);
  // Issue #39: disabling ends every session; a disabled person's cookie signs in nobody even so.
  if (!found || found.person.disabledAt !== null) return undefined;
  const now = deps.clock.now();
  if (found.session.expiresAt <= now) {
    await deleteSession(deps.db, idHash);
    return undefined;
  }
  let expiresAt = found.session.expiresAt;
  let renewed = false;
  if (now - found.session.lastSeenAt >= TOUCH_INTERVAL_MS) {
    expiresAt = expiryFor(deps, found.session.createdAt, now);
    await touchSession(deps.db, idHash, now, expiresAt);
    renewed = true;
  }
  return { person: found.person, expiresAt, renewed, signedInAt: found.session.createdAt };
}

/**
 * Ends the session behind a cookie (sign-out); unknown tokens are ignored. Issue #37 §2: the end
 * is audited (session.ended, in the delete's own commit), and the person's open live views
 * re-check at once (access.changed, after it), so the ones of this browser end now (issue #21 §5).
 */
export async function endSession(deps: Deps, acting: Acting<Who>, token: string): Promise<void> {
  const idHash = hashSecret(token);
  const found = await findSessionWithPerson(deps.db, idHash);
  if (!found) {
    await deleteSession(deps.db, idHash);
    return;
  }
  const userId = found.person.id;
  await changing(deps, acting, async (trx, emit) => {
    await deleteSession(trx, idHash);
    emit({ type: 'session.ended', userId, why: 'signed-out' });
    emit({ type: 'access.changed', topicId: userId });
  });
}

/**
 * Ends the session a browser had when it signs in or up again: a replacement, not a sign-out, so
 * it is not audited (the new sign-in is); its live views still re-check at once.
 */
export async function replaceSession(deps: Deps, acting: Acting<Who>, token: string): Promise<void> {
  const idHash = hashSecret(token);
  const found = await findSessionWithPerson(deps.db, idHash);
  await deleteSession(deps.db, idHash);
  if (found) await emitted(deps, acting, { type: 'access.changed', topicId: found.person.id });
}

/**
 * Whether a session cookie still signs in `personId`, without extending the session: for long
 * streams (live channel views) that re-check on every heartbeat and must not keep a session alive.
 */
export async function sessionStillSignsIn(deps: Deps, token: string, personId: string): Promise<boolean> {
  const found = await findSessionWithPerson(deps.db, hashSecret(token));
  return found !== undefined && found.person.id === personId && found.person.disabledAt === null && found.session.expiresAt > deps.clock.now();
}

/** The person's sessions not yet expired: the current one first, marked; then the most recently used. */
export async function listSessions(deps: Deps, personId: string, currentToken: string | undefined): Promise<SessionView[]> {
  const currentHash = currentToken ? hashSecret(currentToken) : undefined;
  const rows = await listSessionsOfUser(deps.db, personId, deps.clock.now());
  const ordered = [...rows.filter((row) => row.idHash === currentHash), ...rows.filter((row) => row.idHash !== currentHash)];
  return ordered.map((row) => ({
    id: row.idHash,
    device: deviceOf(row.userAgent),
    address: row.address,
    signedInAt: row.createdAt,
    lastUsedAt: row.lastSeenAt,
    current: row.idHash === currentHash,
  }));
}

/** The session id a form sent is not one of the person's sessions (ended already, or never theirs). */
const UNKNOWN_SESSION = 'That session has already ended.';
/** Ending the current session is signing out: the list has no End button for it. */
const CURRENT_SESSION = 'This is the session you are using: sign out to end it.';

/**
 * Ends one of the person's other sessions (issue #38 §5: "end one"). Only their own: a session id
 * of someone else's is refused exactly as an ended one, so the form is no oracle. Audited as
 * session.ended (ended-elsewhere) in the delete's commit; the ended browser's live views re-check.
 */
export async function endOneSession(deps: Deps, acting: Acting<PersonActor>, sessionId: string, currentToken: string | undefined): Promise<void> {
  const userId = acting.actor.id;
  if (currentToken !== undefined && hashSecret(currentToken) === sessionId) throw invalidField(['session'], 'SESSION_CURRENT', CURRENT_SESSION);
  await changing(deps, acting, async (trx, emit) => {
    const ended = await deleteSessionOfUser(trx, userId, sessionId);
    if (!ended) throw invalidField(['session'], 'SESSION_UNKNOWN', UNKNOWN_SESSION);
    emit({ type: 'session.ended', userId, why: 'ended-elsewhere' });
    emit({ type: 'access.changed', topicId: userId });
  });
}

/**
 * Ends every session of the person but the current one (issue #38 §5: "or all others"); the number
 * ended. One session.ended for the lot, as a password change records it; none when there were none.
 */
export async function endOtherSessions(deps: Deps, acting: Acting<PersonActor>, currentToken: string | undefined): Promise<number> {
  const userId = acting.actor.id;
  const keep = currentToken ? hashSecret(currentToken) : undefined;
  return changing(deps, acting, async (trx, emit) => {
    const ended = await deleteSessionsOfUser(trx, userId, keep);
    if (ended > 0) {
      emit({ type: 'session.ended', userId, why: 'ended-elsewhere' });
      emit({ type: 'access.changed', topicId: userId });
    }
    return ended;
  });
}
