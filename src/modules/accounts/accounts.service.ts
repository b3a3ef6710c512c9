import { actingAs, type Acting, type Who } from '../../core/acting.js';
import { person as personActor, type PersonActor } from '../../core/actor.js';
import { HOUR, MINUTE } from '../../core/clock.js';
import { addFieldError, ApiErrors, RateLimitedError, type ErrorTree } from '../../core/errors.js';
import type { BucketRule } from '../../rate-limit/bucket.js';
import { hashPassword, makeDecoyHash, verifyPassword, type PasswordCost } from '../../core/password.js';
import { hashSecret } from '../../core/secrets.js';
import type { Deps } from '../../deps.js';
import type { FieldChange } from '../../events/domain-events.js';
import { changing, emitted } from '../../events/event-bus.js';
import { releaseUploadedImage } from '../resources/uploaded-images.service.js';
import { parseStoredImage } from '../resources/uploaded-images.js';
import { isUniqueViolation } from '../../storage/types.js';
import { checkAvatarUrl, checkDisplayName, checkEmail, checkPassword, checkUsername, PASSWORD_MAX_LENGTH, type Person } from '../directory/people.js';
import type { Checked } from '../../core/checked.js';
import { createPerson, getCredentials, getPasswordHash, getPersonById, getPersonByUsername, savePasswordHash, saveProfile } from '../directory/people.service.js';
import { endSession, replaceSession, startSession, startSessionIn, type StartedSession } from './sessions.service.js';
import { deleteSessionsOfUser } from './sessions.repository.js';
import { addressBlock, beginSignIn } from './sign-in-throttle.js';
import { beginPendingSignIn, hasSecondFactor, type PendingSignIn } from '../mfa/mfa.service.js';
import { sendVerification } from './email-verification.service.js';
import { mailConfigured } from '../mail/mail.service.js';
import { ACCOUNT_DISABLED_CODE, disabledAccountMessage } from './disabled-accounts.js';
import { allowanceForSignUp, signUpRefused, useSignUpLink } from './sign-ups.service.js';
import { LinkRefusedError } from './account-links.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';

/** Discord's answer for a taken username. */
const USERNAME_TAKEN = { code: 'USERNAME_ALREADY_TAKEN', message: 'Username is unavailable. Try adding numbers, letters, underscores (_) or periods (.).' };

/** The one message for an unknown username and a wrong password: which one it was is not told. */
export const INCORRECT_CREDENTIALS = 'Incorrect username or password';

/** Collects field errors so that a form shows every problem at once. */
class FieldErrors {
  readonly tree: ErrorTree = {};
  private count = 0;

  take<T>(field: string, checked: Checked<T>): T | undefined {
    if (checked.ok) return checked.value;
    this.add(field, checked.code, checked.message);
    return undefined;
  }

  add(field: string, code: string, message: string): void {
    addFieldError(this.tree, [field], { code, message });
    this.count += 1;
  }

  /** Throws the 50035 listing every error, if there is any. */
  throwIfAny(): void {
    if (this.count > 0) throw ApiErrors.invalidFormBody(this.tree);
  }
}

export interface Registration {
  username: string;
  name?: string;
  email?: string | null;
  password: string;
}

/**
 * Sign-ups per address (IPv6 by /64), issue #21 §2: each one costs a full password hash, so an
 * unlimited stream from one source could keep the hashing lane busy. GATEHOUSE_SIGN_UPS_PER_HOUR
 * (default 10, room for a classroom behind one address); only sign-ups whose fields are all
 * valid count.
 */
function signUpRule(deps: Deps): BucketRule | undefined {
  return deps.config.signUpsPerHour > 0 ? { limit: deps.config.signUpsPerHour, windowMs: HOUR } : undefined;
}

/**
 * Creates a person who signs in with a password (issue #2 §5). Every field is checked and every
 * problem reported at once as a 50035; nothing is created unless all are fine. Usernames are
 * unique ignoring case, also under a race (the unique index decides). `acting` is whoever asks:
 * nobody yet (sign-up, limited per `acting.address`) or the operator (the CLI: no address, not
 * limited). Issue #37 §2: person.created is audited in the insert's own commit.
 */
export async function registerPerson(deps: Deps, acting: Acting<Who>, input: Registration, within?: (trx: Transaction<Database>) => Promise<void>): Promise<Person> {
  const errors = new FieldErrors();
  const username = errors.take('username', checkUsername(input.username, deps.config.serviceName));
  const name = errors.take('name', checkDisplayName(input.name ?? '', username ?? input.username.trim(), deps.config.serviceName));
  const email = errors.take('email', checkEmail(input.email));
  const password = errors.take('password', checkPassword(input.password));
  if (username !== undefined && (await getPersonByUsername(deps, username))) errors.add('username', USERNAME_TAKEN.code, USERNAME_TAKEN.message);
  errors.throwIfAny();
  const rule = signUpRule(deps);
  if (acting.address !== null && rule) {
    const allowed = await deps.buckets.take(`signup:address:${addressBlock(acting.address)}`, rule, deps.clock.now());
    if (!allowed.allowed) throw new RateLimitedError(allowed.resetAfterMs, 'Too many accounts were created from your network.');
  }

  const person: Person = {
    id: deps.ids.next(),
    username: username as string,
    name: name as string,
    email: email ?? null,
    emailVerified: false,
    avatarUrl: null,
    bot: false,
    applicationId: null,
    createdAt: deps.clock.now(),
    admin: false,
    disabledAt: null,
  };
  const passwordHash = await hashPassword(password as string, deps.config.passwordCost);
  try {
    await changing(deps, acting, async (trx, emit) => {
      // Issue #39: the operator's list shows where a sign-up came from (the CLI's have no address).
      await createPerson(trx, { ...person, passwordHash, signupAddress: acting.address });
      // Issue #39: a sign-up link is used in the account's own commit (one link, one account).
      if (within) await within(trx);
      emit({ type: 'person.created', userId: person.id });
      // Issue #38 §2: an address given at sign-up is unverified until its link is used.
      if (person.email !== null) await sendVerification(deps, trx, emit, person, person.email, false);
    });
  } catch (error) {
    // Two registrations of one name at once: the unique index lets one through.
    if (isUniqueViolation(error)) throw ApiErrors.invalidFormBody(addFieldError({}, ['username'], USERNAME_TAKEN));
    throw error;
  }
  return person;
}

/**
 * Registration from the sign-up page: creates the person and signs them in, ending any session
 * the browser had (a new account always gets a new session id).
 */
export async function signUp(
  deps: Deps,
  acting: Acting<Who>,
  input: Registration & { userAgent: string | null; replacingSessionToken?: string | undefined; inviteCode?: string | undefined; signUpToken?: string | undefined },
): Promise<{ person: Person; session: StartedSession }> {
  // Issue #39: GATEHOUSE_SIGN_UPS decides whether this page may create an account (sign-ups.service.ts).
  const allowance = await allowanceForSignUp(deps, { inviteCode: input.inviteCode, token: input.signUpToken });
  if (!allowance.allowed) throw signUpRefused(allowance);
  const link = allowance.link;
  let person: Person;
  try {
    person = await registerPerson(deps, acting, input, link ? (trx) => useSignUpLink(deps, trx, link) : undefined);
  } catch (error) {
    // Another sign-up used the link first: refused like a used link, and this account was not made.
    if (error instanceof LinkRefusedError) throw signUpRefused({ ...allowance, allowed: false, message: 'This sign-up link has been used already.' });
    throw error;
  }
  const signedIn = actingAs(acting, personActor(person.id));
  const session = await startSession(deps, signedIn, input.userAgent);
  if (input.replacingSessionToken) await replaceSession(deps, signedIn, input.replacingSessionToken);
  return { person, session };
}

/** One decoy hash per cost setting, computed on first need (issue #2 §5: no timing oracle). */
const decoys = new Map<string, Promise<string>>();

function decoyHash(cost: PasswordCost): Promise<string> {
  const key = `${cost.log2N}:${cost.r}:${cost.p}`;
  let decoy = decoys.get(key);
  if (!decoy) {
    decoy = makeDecoyHash(cost);
    decoys.set(key, decoy);
    // A failure must not be cached for good.
    decoy.catch(() => decoys.delete(key));
  }
  return decoy;
}

/** Could be a stored password: non-empty and within the limit (UTF-16 units, so twice the characters). */
function plausiblePassword(password: string): boolean {
  return password.length > 0 && password.length <= PASSWORD_MAX_LENGTH * 2;
}

export interface SignInInput {
  username: string;
  password: string;
  userAgent: string | null;
  /** The cookie of a session this browser already has: ended once the new one starts. */
  replacingSessionToken?: string | undefined;
}

/**
 * Checks a username and password and starts a session (issue #2 §5). Failed attempts are
 * throttled per (account, address) and per address, and slow the account down
 * (sign-in-throttle.ts, issue #21 §2): once a limit is reached the attempt is refused with
 * RateLimitedError before any password is checked; the owner on another address is never refused. An unknown username
 * costs one scrypt like a wrong password, and both get the same 401-style field error.
 * Signing in always starts a new session with a new random id (no session fixation) and ends
 * the one the browser had. `acting` is the request (nobody yet; its address is the one throttled:
 * request.ip, X-Forwarded-For only from TRUST_PROXY). Issue #37 §2: every outcome is audited —
 * signin.succeeded (in the new session's commit), or signin.failed saying why and the username
 * tried (never the password).
 */
export async function signIn(deps: Deps, acting: Acting<Who>, input: SignInInput): Promise<{ person: Person; session: StartedSession } | { person: Person; pending: PendingSignIn }> {
  const username = input.username.trim();
  let throttle;
  try {
    throttle = await beginSignIn(deps.buckets, deps.clock.now(), input.username, acting.address ?? undefined);
  } catch (error) {
    if (error instanceof RateLimitedError && (await throttledWorthRecording(deps, acting))) {
      await emitted(deps, acting, { type: 'signin.failed', username: triedName(username), userId: null, why: 'throttled' });
    }
    throw error;
  }
  if (throttle.delayMs > 0) await deps.clock.sleep(throttle.delayMs);
  // Overlong input is refused without hashing it: its length already says it cannot match.
  const plausible = username.length > 0 && username.length <= 64 && plausiblePassword(input.password);
  const found = plausible ? await getCredentials(deps, username) : undefined;
  let ok = false;
  if (found) ok = await verifyPassword(input.password, found.passwordHash);
  else if (plausible) await verifyPassword(input.password, await decoyHash(deps.config.passwordCost));
  if (!found || !ok) {
    await throttle.failed();
    const why = found ? 'wrong-password' : 'unknown-person';
    await emitted(deps, acting, { type: 'signin.failed', username: triedName(username), userId: found?.person.id ?? null, why });
    throw ApiErrors.invalidFormBody(addFieldError({}, ['password'], { code: 'INVALID_LOGIN', message: INCORRECT_CREDENTIALS }));
  }
  // Issue #39: a disabled account signs in to nothing. Said only after the right password, so the
  // refusal tells a guesser nothing about the account.
  if (found.person.disabledAt !== null) {
    await emitted(deps, acting, { type: 'signin.failed', username: triedName(username), userId: found.person.id, why: 'disabled' });
    throw ApiErrors.invalidFormBody(addFieldError({}, ['password'], { code: ACCOUNT_DISABLED_CODE, message: disabledAccountMessage(deps.config.serviceName) }));
  }
  // Issue #38 §4: with a second factor on, the password only opens the second step (mfa.service.ts).
  // The throttle is cleared only when that step succeeds, so a known password does not reset the
  // count of wrong codes from this address.
  if (await hasSecondFactor(deps, found.person.id)) return { person: found.person, pending: await beginPendingSignIn(deps, found.person.id, input.userAgent) };
  await throttle.succeeded();
  const signedIn = actingAs(acting, personActor(found.person.id));
  const userId = found.person.id;
  const session = await changing(deps, signedIn, async (trx, emit) => {
    const started = await startSessionIn(deps, signedIn, trx, input.userAgent);
    emit({ type: 'signin.succeeded', userId });
    return started;
  });
  if (input.replacingSessionToken) await replaceSession(deps, signedIn, input.replacingSessionToken);
  return { person: found.person, session };
}

/**
 * Refused attempts recorded per address (IPv6 by /64) and minute: one. A throttled refusal costs
 * no password hash and no database write, so a flood of them must not become a flood of audit
 * rows (issue #21 §2: the throttle is what keeps one source cheap); the first of each minute says
 * that the source is still at it.
 */
const THROTTLED_RECORD_RULE: BucketRule = { limit: 1, windowMs: MINUTE };

async function throttledWorthRecording(deps: Deps, acting: Acting<Who>): Promise<boolean> {
  const key = `signin:throttled-recorded:${acting.address === null ? 'local' : addressBlock(acting.address)}`;
  return (await deps.buckets.take(key, THROTTLED_RECORD_RULE, deps.clock.now())).allowed;
}

/**
 * The username an audit row keeps of a failed sign-in: as typed, cut to the longest a username
 * can be, so an overlong field (or a password typed into it by mistake past that) is not kept whole.
 */
function triedName(username: string): string {
  return [...username].slice(0, 64).join('');
}

/** Signs out the browser holding this session cookie (audited as session.ended: sessions.service.ts). */
export async function signOut(deps: Deps, acting: Acting<Who>, sessionToken: string | undefined): Promise<void> {
  if (sessionToken) await endSession(deps, acting, sessionToken);
}

/** A person by id, for pages that show their own profile. */
export async function getPerson(deps: Deps, personId: string): Promise<Person | undefined> {
  return getPersonById(deps, personId);
}

export interface ProfileChanges {
  /** Display name; empty means the username. Undefined leaves it as is. */
  name?: string;
  /** Empty or null removes it. Undefined leaves it as is. */
  email?: string | null;
  /** An https URL; empty or null removes it. Undefined leaves it as is. */
  avatarUrl?: string | null;
}

/**
 * Changes display name, e-mail and avatar URL (issue #2 §5's profile page). Every field is
 * checked first and every problem reported at once (50035); nothing changes unless all are fine.
 * A changed e-mail address is no longer verified. The person changes only their own profile.
 * Issue #37 §2: profile.updated (not audited) names the changed fields.
 */
export async function updateProfile(deps: Deps, acting: Acting<PersonActor>, input: ProfileChanges): Promise<Person> {
  const personId = acting.actor.id;
  const person = await getPersonById(deps, personId);
  if (!person || person.bot) throw ApiErrors.unknownUser();
  const errors = new FieldErrors();
  const name = input.name === undefined ? undefined : errors.take('name', checkDisplayName(input.name, person.username, deps.config.serviceName));
  const email = input.email === undefined ? undefined : errors.take('email', checkEmail(input.email));
  const avatarUrl = input.avatarUrl === undefined ? undefined : errors.take('avatarUrl', checkAvatarUrl(input.avatarUrl));
  errors.throwIfAny();

  const changes: { name?: string; email?: string | null; avatarUrl?: string | null } = {};
  if (name !== undefined && name !== person.name) changes.name = name;
  if (email !== undefined && email !== person.email) changes.email = email;
  // Issue #42 §3: the form's empty URL field keeps an uploaded avatar (Remove removes it).
  const keepsUpload = avatarUrl === null && parseStoredImage(person.avatarUrl) !== undefined;
  if (avatarUrl !== undefined && avatarUrl !== person.avatarUrl && !keepsUpload) changes.avatarUrl = avatarUrl;
  // Issue #38 §2: replacing an address takes effect only once the new one is verified (its link
  // is mailed; the old address stays until then); adding or removing one takes effect at once.
  // Without mail no link could arrive, so a replacement takes effect at once, unverified.
  const newEmail = changes.email;
  const waits = typeof newEmail === 'string' && person.email !== null && mailConfigured(deps);
  if (waits) delete changes.email;
  await changing(deps, acting, async (trx, emit) => {
    await saveProfile(trx, personId, changes);
    if (typeof newEmail === 'string') await sendVerification(deps, trx, emit, person, newEmail, waits);
  });
  const changed: FieldChange[] = [];
  if (changes.name !== undefined) changed.push({ key: 'name', old: person.name, new: changes.name });
  // The address itself stays out of the event (it may travel to other instances): only that it changed.
  if (changes.email !== undefined || waits) changed.push({ key: 'email' });
  if (changes.avatarUrl !== undefined) changed.push({ key: 'avatar_url', old: person.avatarUrl, new: changes.avatarUrl });
  // A URL replacing an uploaded avatar: its blob goes now that nothing names it.
  if (changes.avatarUrl !== undefined) await releaseUploadedImage(deps, person.avatarUrl, changes.avatarUrl);
  if (changed.length > 0) await emitted(deps, acting, { type: 'profile.updated', userId: personId, changes: changed });
  return {
    ...person,
    ...changes,
    emailVerified: changes.email !== undefined ? false : person.emailVerified,
  };
}

export interface PasswordChange {
  currentPassword: string;
  newPassword: string;
  /** The new password typed a second time, when the form asks for it. */
  confirmPassword?: string | undefined;
  /** The session of the browser making the change, which stays signed in. */
  currentSessionToken?: string | undefined;
}

/**
 * Changes a password after checking the current one, and ends the person's other sessions, so a
 * browser that learnt the old password or stole a cookie is signed out. Wrong current passwords
 * count against the account's sign-in throttle (and `acting.address`'s): a stolen session must
 * not become a free password-guessing oracle. The person changes only their own password.
 * Issue #37 §2: the new hash, the other sessions' end, password.changed and session.ended are one
 * transaction, so the audit rows are in the change's own commit.
 */
export async function changePassword(deps: Deps, acting: Acting<PersonActor>, input: PasswordChange): Promise<{ endedSessions: number }> {
  const personId = acting.actor.id;
  const person = await getPersonById(deps, personId);
  const stored = person && !person.bot ? await getPasswordHash(deps, personId) : undefined;
  if (!person || stored === undefined) throw ApiErrors.unknownUser();

  const errors = new FieldErrors();
  const newPassword = errors.take('newPassword', checkPassword(input.newPassword));
  if (newPassword !== undefined && newPassword === input.currentPassword) {
    errors.add('newPassword', 'PASSWORD_UNCHANGED', 'The new password must differ from the current one.');
  }
  if (input.confirmPassword !== undefined && input.confirmPassword !== input.newPassword) {
    errors.add('confirmPassword', 'PASSWORD_MISMATCH', 'The two new passwords do not match.');
  }
  // The current password is checked even when the new one is unusable, so every error shows at once.
  const throttle = await beginSignIn(deps.buckets, deps.clock.now(), person.username, acting.address ?? undefined);
  if (throttle.delayMs > 0) await deps.clock.sleep(throttle.delayMs);
  const currentOk = plausiblePassword(input.currentPassword) && (await verifyPassword(input.currentPassword, stored));
  if (!currentOk) {
    await throttle.failed();
    errors.add('currentPassword', 'PASSWORD_DOES_NOT_MATCH', 'Password does not match.');
  } else {
    await throttle.succeeded();
  }
  errors.throwIfAny();

  const passwordHash = await hashPassword(newPassword as string, deps.config.passwordCost);
  const keep = input.currentSessionToken ? hashSecret(input.currentSessionToken) : undefined;
  const endedSessions = await changing(deps, acting, async (trx, emit) => {
    await savePasswordHash(trx, personId, passwordHash);
    const ended = await deleteSessionsOfUser(trx, personId, keep);
    emit({ type: 'password.changed', userId: personId });
    if (ended > 0) {
      emit({ type: 'session.ended', userId: personId, why: 'password-changed' });
      // Issue #36 §1: the live views of the browsers just signed out end now, not at their next heartbeat.
      emit({ type: 'access.changed', topicId: personId });
    }
    return ended;
  });
  return { endedSessions };
}
