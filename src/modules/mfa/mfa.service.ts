import * as OTPAuth from 'otpauth';
import QRCode from 'qrcode';
import { actingAs, type Acting, type Who } from '../../core/acting.js';
import { person as personActor, type PersonActor } from '../../core/actor.js';
import { MINUTE } from '../../core/clock.js';
import { ApiErrors, invalidField } from '../../core/errors.js';
import { verifyPassword } from '../../core/password.js';
import { open, seal, sealingKey } from '../../core/sealed.js';
import { hashSecret } from '../../core/secrets.js';
import type { Deps } from '../../deps.js';
import { changing, emitted } from '../../events/event-bus.js';
import { getPasswordHash, getPersonById, getPersonByUsername } from '../directory/people.service.js';
import type { Person } from '../directory/people.js';
import { startSessionIn, type StartedSession } from '../accounts/sessions.service.js';
import { beginSignIn } from '../accounts/sign-in-throttle.js';
import { ACCOUNT_DISABLED_CODE, disabledAccountMessage } from '../accounts/disabled-accounts.js';
import {
  countPasskeys,
  countUnusedRecoveryCodes,
  deletePasskeysOf,
  deletePendingSignIn,
  deleteRecoveryCodes,
  deleteTotp,
  enableTotp,
  findPendingSignIn,
  findSessionMethods,
  findTotp,
  insertPendingSignIn,
  insertSessionMethods,
  purgePendingSignIns,
  purgeSessionMethodsOfUser,
  readMfaEnabled,
  replaceRecoveryCodes,
  saveTotpEnrolment,
  syncMfaEnabled,
  useRecoveryCode,
  useTotpStep,
} from './mfa.repository.js';
import type { SecondFactorStatus, TotpEnrolment } from './mfa.js';

/** SPEC RFC 6238 §4: 30-second steps, 6 digits, HMAC-SHA-1 (what every authenticator app reads). */
const PERIOD_SECONDS = 30;
const DIGITS = 6;
/** RFC 6238 §5.2: one step either side, for clocks a little apart and codes typed slowly. */
const WINDOW = 1;
/** 160-bit seeds (RFC 4226 §4 recommends at least that). */
const SEED_BYTES = 20;
const SEALING_PURPOSE = 'mfa-totp-seed';
/** Issue #38 §4: ten single-use recovery codes. */
const RECOVERY_CODE_COUNT = 10;
/** Issue #38 §4: a pending sign-in is short-lived (about five minutes). */
export const PENDING_SIGN_IN_MS = 5 * MINUTE;

export const WRONG_CODE = 'That code is not right, or it was already used. Enter the current code from your authenticator app, or a recovery code.';
export const PENDING_EXPIRED = 'This sign-in has expired. Sign in again.';

function sealKey(secret: string): Buffer {
  return sealingKey(secret, SEALING_PURPOSE);
}

function totpFor(deps: Deps, base32: string, label: string): OTPAuth.TOTP {
  return new OTPAuth.TOTP({ issuer: deps.config.serviceName, label, algorithm: 'SHA1', digits: DIGITS, period: PERIOD_SECONDS, secret: OTPAuth.Secret.fromBase32(base32) });
}

/** The seed of a sealed row; the row's person is the additional data, so a seed copied to another row does not open. */
function openSeed(deps: Deps, sealed: string, userId: string): string | undefined {
  for (const secret of deps.secrets) {
    const plain = open(sealKey(secret), sealed, userId);
    if (plain !== undefined) return plain;
  }
  return undefined;
}

/** Digits only, spaces and dashes ignored (apps show "123 456"). */
function normalizeCode(code: string): string {
  return code.replace(/[\s-]/g, '');
}

/** The time step a code is valid for now (within the window), or undefined. */
function matchingStep(deps: Deps, base32: string, code: string): number | undefined {
  const token = normalizeCode(code);
  if (!/^[0-9]{6}$/.test(token)) return undefined;
  const totp = totpFor(deps, base32, 'check');
  const timestamp = deps.clock.now();
  const delta = totp.validate({ token, timestamp, window: WINDOW });
  if (delta === null) return undefined;
  return totp.counter({ timestamp }) + delta;
}

/**
 * Whether the person has a second factor on (issue #38 §4): a confirmed TOTP authenticator or a
 * registered passkey, so the sign-in, account deletion and the servers' MFA level ask one question.
 */
export async function hasSecondFactor(deps: Deps, userId: string): Promise<boolean> {
  // users.mfa_enabled, kept in the transaction of every change to a second factor (secondFactorsChanged).
  return readMfaEnabled(deps.db, userId);
}

export async function secondFactorStatus(deps: Deps, userId: string): Promise<SecondFactorStatus> {
  const [totp, passkeys, left] = await Promise.all([findTotp(deps.db, userId), countPasskeys(deps.db, userId), countUnusedRecoveryCodes(deps.db, userId)]);
  return { totpEnabled: totp !== undefined && totp.enabledAt !== null, passkeys, recoveryCodesLeft: left };
}

/** The second factors the second sign-in step offers the person (issue #38 §4). */
export async function secondStepOffers(deps: Deps, userId: string): Promise<{ totp: boolean; passkey: boolean; recoveryCodes: boolean }> {
  const status = await secondFactorStatus(deps, userId);
  return { totp: status.totpEnabled, passkey: status.passkeys > 0, recoveryCodes: status.recoveryCodesLeft > 0 };
}


/**
 * Starts (or restarts) TOTP enrolment: a new seed, sealed with the server secret and not yet a
 * second factor until confirmTotp sees a code from it (issue #38 §4).
 */
export async function startTotpEnrolment(deps: Deps, acting: Acting<PersonActor>): Promise<TotpEnrolment> {
  const userId = acting.actor.id;
  const person = await getPersonById(deps, userId);
  if (!person || person.bot) throw ApiErrors.unknownUser();
  const existing = await findTotp(deps.db, userId);
  if (existing && existing.enabledAt !== null) throw invalidField(['totp'], 'TOTP_ALREADY_ENABLED', 'Two-factor authentication is already on.');
  const secret = new OTPAuth.Secret({ buffer: new Uint8Array(deps.random.bytes(SEED_BYTES)).buffer }).base32;
  const sealed = seal(sealKey(deps.secrets[0] as string), deps.random.bytes(12), secret, userId);
  await saveTotpEnrolment(deps.db, userId, sealed, deps.clock.now());
  return enrolmentView(deps, person, secret);
}

/** The enrolment waiting for its code, shown again (a refused code keeps the same seed). */
export async function pendingTotpEnrolment(deps: Deps, userId: string): Promise<TotpEnrolment | undefined> {
  const [person, totp] = await Promise.all([getPersonById(deps, userId), findTotp(deps.db, userId)]);
  if (!person || !totp || totp.enabledAt !== null) return undefined;
  const secret = openSeed(deps, totp.sealedSecret, userId);
  return secret === undefined ? undefined : enrolmentView(deps, person, secret);
}

async function enrolmentView(deps: Deps, person: Person, secret: string): Promise<TotpEnrolment> {
  const uri = totpFor(deps, secret, person.username).toString();
  const qrSvg = await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return { secret, uri, qrSvg };
}

function newRecoveryCodes(deps: Deps): string[] {
  // 10 characters of base32 (50 bits) each, shown as xxxxx-xxxxx.
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = deps.random.bytes(10);
    const chars = [...bytes].map((b) => alphabet[b % 32]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** Recovery codes are compared as typed but without case, spaces or dashes. */
function recoveryHash(code: string): string {
  return hashSecret(`recovery:${code.toLowerCase().replace(/[\s-]/g, '')}`);
}

/**
 * Confirms TOTP enrolment with a code from the new authenticator, turns it on, and makes ten new
 * recovery codes, returned this once (issue #38 §4: shown once, stored hashed).
 */
export async function confirmTotp(deps: Deps, acting: Acting<PersonActor>, code: string): Promise<{ recoveryCodes: string[] }> {
  const userId = acting.actor.id;
  const totp = await findTotp(deps.db, userId);
  if (!totp || totp.enabledAt !== null) throw invalidField(['code'], 'TOTP_NOT_ENROLLING', 'Start setting up an authenticator app first.');
  const secret = openSeed(deps, totp.sealedSecret, userId);
  const step = secret === undefined ? undefined : matchingStep(deps, secret, code);
  if (step === undefined) throw invalidField(['code'], 'TOTP_CODE_INVALID', 'That code is not right. Enter the 6-digit code your authenticator app shows now.');
  const codes = newRecoveryCodes(deps);
  const now = deps.clock.now();
  await changing(deps, acting, async (trx, emit) => {
    if (!(await enableTotp(trx, userId, step, now))) throw invalidField(['code'], 'TOTP_NOT_ENROLLING', 'Start setting up an authenticator app first.');
    await replaceRecoveryCodes(trx, userId, codes.map(recoveryHash), now);
    await secondFactorsChanged(trx, userId);
    emit({ type: 'mfa.totp_enabled', userId });
    emit({ type: 'mfa.recovery_codes_generated', userId });
  });
  return { recoveryCodes: codes };
}

/**
 * A step of the change that sets up a second factor other than TOTP (the first passkey,
 * accounts/passkeys.service.ts), inside its transaction: when the person has no unused recovery
 * code, ten new ones, returned to be shown once, as TOTP's confirmation makes them (issue #38 §4:
 * a person who loses the device still has a way in). The caller emits
 * mfa.recovery_codes_generated when codes are returned.
 */
export async function issueRecoveryCodesIfNone(deps: Deps, trx: Parameters<typeof replaceRecoveryCodes>[0], userId: string): Promise<string[] | undefined> {
  if ((await countUnusedRecoveryCodes(trx, userId)) > 0) return undefined;
  const codes = newRecoveryCodes(deps);
  await replaceRecoveryCodes(trx, userId, codes.map(recoveryHash), deps.clock.now());
  return codes;
}

/**
 * A step of every change that adds or removes a second factor (TOTP or a passkey), inside its
 * transaction: users.mfa_enabled follows (issue #38 §4: /users/@me and the MFA-level checks read
 * it with the person's row), and when no factor is left the recovery codes go too (they stand in
 * for a second factor the person no longer has).
 */
export async function secondFactorsChanged(trx: Parameters<typeof deleteRecoveryCodes>[0], userId: string): Promise<void> {
  if (!(await syncMfaEnabled(trx, userId))) await deleteRecoveryCodes(trx, userId);
}

/**
 * A step of deleting the account, inside its transaction: every second factor and recovery code
 * goes (the row stays as "Deleted account"; nothing may sign in to it or keep its secrets).
 */
export async function dropSecondFactors(trx: Parameters<typeof deleteTotp>[0], userId: string): Promise<void> {
  await deleteTotp(trx, userId);
  await deletePasskeysOf(trx, userId);
  await secondFactorsChanged(trx, userId);
}

/**
 * Checks a second-factor code for the person: a TOTP code (each time step once) or an unused
 * recovery code (then used up), inside `trx`. The method that worked, or undefined.
 */
async function useSecondFactorCode(deps: Deps, db: Parameters<typeof useTotpStep>[0], userId: string, code: string): Promise<'otp' | 'recovery' | undefined> {
  const trimmed = code.trim();
  if (trimmed.length === 0 || trimmed.length > 64) return undefined;
  if (/^[0-9\s]+$/.test(trimmed)) {
    const totp = await findTotp(db, userId);
    if (!totp || totp.enabledAt === null) return undefined;
    const secret = openSeed(deps, totp.sealedSecret, userId);
    const step = secret === undefined ? undefined : matchingStep(deps, secret, trimmed);
    // A code works once: the step must be later than the last one used (issue #38 §4).
    if (step === undefined || !(await useTotpStep(db, userId, step))) return undefined;
    return 'otp';
  }
  return (await useRecoveryCode(db, userId, recoveryHash(trimmed), deps.clock.now())) ? 'recovery' : undefined;
}

export interface Reauthentication {
  password: string;
  /** The current second factor: a TOTP code or a recovery code. */
  code: string;
}

/**
 * Issue #38 §4: removing TOTP or regenerating codes asks for the password and the current second
 * factor. Wrong answers count against the sign-in throttle, as a wrong current password does.
 */
export async function reauthenticate(deps: Deps, acting: Acting<PersonActor>, input: Reauthentication): Promise<void> {
  const userId = acting.actor.id;
  const person = await getPersonById(deps, userId);
  const stored = person && !person.bot ? await getPasswordHash(deps, userId) : undefined;
  if (!person || stored === undefined) throw ApiErrors.unknownUser();
  const throttle = await beginSignIn(deps.buckets, deps.clock.now(), person.username, acting.address ?? undefined);
  if (throttle.delayMs > 0) await deps.clock.sleep(throttle.delayMs);
  const passwordOk = input.password.length > 0 && input.password.length <= 512 && (await verifyPassword(input.password, stored));
  if (!passwordOk) {
    await throttle.failed();
    throw invalidField(['password'], 'PASSWORD_DOES_NOT_MATCH', 'Password does not match.');
  }
  const method = await useSecondFactorCode(deps, deps.db, userId, input.code);
  if (method === undefined) {
    await throttle.failed();
    await emitted(deps, acting, { type: 'signin.second_factor_failed', userId });
    throw invalidField(['code'], 'MFA_CODE_INVALID', WRONG_CODE);
  }
  await throttle.succeeded();
  if (method === 'recovery') await emitted(deps, acting, { type: 'mfa.recovery_code_used', userId });
}

/**
 * Turns TOTP off after re-authentication; the recovery codes go too unless a passkey is left as
 * the second factor (they are its fallback then).
 */
export async function disableTotp(deps: Deps, acting: Acting<PersonActor>, input: Reauthentication): Promise<void> {
  const userId = acting.actor.id;
  const totp = await findTotp(deps.db, userId);
  if (!totp || totp.enabledAt === null) throw invalidField(['code'], 'TOTP_NOT_ENABLED', 'No authenticator app is set up.');
  await reauthenticate(deps, acting, input);
  await changing(deps, acting, async (trx, emit) => {
    await deleteTotp(trx, userId);
    await secondFactorsChanged(trx, userId);
    emit({ type: 'mfa.totp_disabled', userId });
  });
}

/** A new set of ten recovery codes replacing the old set, after re-authentication; shown once. */
export async function regenerateRecoveryCodes(deps: Deps, acting: Acting<PersonActor>, input: Reauthentication): Promise<{ recoveryCodes: string[] }> {
  const userId = acting.actor.id;
  if (!(await hasSecondFactor(deps, userId))) throw invalidField(['code'], 'TOTP_NOT_ENABLED', 'Two-factor authentication is not on.');
  await reauthenticate(deps, acting, input);
  const codes = newRecoveryCodes(deps);
  await changing(deps, acting, async (trx, emit) => {
    await replaceRecoveryCodes(trx, userId, codes.map(recoveryHash), deps.clock.now());
    emit({ type: 'mfa.recovery_codes_generated', userId });
  });
  return { recoveryCodes: codes };
}

/**
 * The operator removes every second factor of a person who lost theirs (issue #38 §3: `gatehouse
 * people reset-mfa`): TOTP, passkeys (a passkey is a second factor too) and recovery codes; the
 * next sign-in asks for the password only. mfa.reset_by_operator is audited when there was
 * something to remove.
 */
export async function resetSecondFactors(deps: Deps, acting: Acting<Who>, username: string): Promise<{ person: Person; removed: boolean }> {
  const person = await getPersonByUsername(deps, username);
  if (!person || person.bot) throw ApiErrors.unknownUser();
  const userId = person.id;
  const removed = await changing(deps, acting, async (trx, emit) => {
    const had = (await deleteTotp(trx, userId)) > 0;
    const passkeys = await deletePasskeysOf(trx, userId);
    const codes = await deleteRecoveryCodes(trx, userId);
    await secondFactorsChanged(trx, userId);
    const any = had || passkeys > 0 || codes > 0;
    if (any) emit({ type: 'mfa.reset_by_operator', userId });
    return any;
  });
  return { person, removed };
}

/** A pending sign-in: the cookie value, shown to the browser only. */
export interface PendingSignIn {
  token: string;
  expiresAt: number;
}

/**
 * After a correct password for a person with a second factor: not a session, a short-lived
 * pending sign-in (issue #38 §4), stored hashed and bound to the browser by its cookie.
 */
export async function beginPendingSignIn(deps: Deps, userId: string, userAgent: string | null): Promise<PendingSignIn> {
  const now = deps.clock.now();
  await purgePendingSignIns(deps.db, now);
  const token = deps.random.bytes(32).toString('base64url');
  const expiresAt = now + PENDING_SIGN_IN_MS;
  await insertPendingSignIn(deps.db, hashSecret(token), userId, userAgent ? userAgent.slice(0, 256) : null, now, expiresAt);
  return { token, expiresAt };
}

/** The person a pending sign-in cookie is for, while it lasts. */
export async function pendingSignInPerson(deps: Deps, token: string | undefined): Promise<Person | undefined> {
  if (!token) return undefined;
  const pending = await findPendingSignIn(deps.db, hashSecret(token));
  if (!pending || pending.expiresAt <= deps.clock.now()) return undefined;
  return getPersonById(deps, pending.userId);
}

export interface SecondStepInput {
  /** The pending sign-in cookie. */
  token: string | undefined;
  userAgent: string | null;
}

/**
 * Completes the second sign-in step (issue #38 §4) and starts the session: `otp` and `recovery`
 * check `code` here; `passkey` is for a caller that has verified a passkey assertion of this
 * person itself (H4) and passes its amr value (`hwk` or `swk`). Throttled like a password; a
 * failure is audited as signin.second_factor_failed. The session's amr is recorded for its ID tokens.
 */
export async function completeSecondStep(
  deps: Deps,
  acting: Acting<Who>,
  pending: SecondStepInput,
  proof: { method: 'otp' | 'recovery'; code: string } | { method: 'passkey'; verifiedUserId: string; amr: 'hwk' | 'swk' },
): Promise<{ person: Person; session: StartedSession; amr: string[] }> {
  const idHash = pending.token ? hashSecret(pending.token) : undefined;
  const found = idHash ? await findPendingSignIn(deps.db, idHash) : undefined;
  if (!idHash || !found || found.expiresAt <= deps.clock.now()) throw invalidField(['code'], 'SIGN_IN_EXPIRED', PENDING_EXPIRED);
  const person = await getPersonById(deps, found.userId);
  if (!person) throw invalidField(['code'], 'SIGN_IN_EXPIRED', PENDING_EXPIRED);
  const throttle = await beginSignIn(deps.buckets, deps.clock.now(), person.username, acting.address ?? undefined);
  if (throttle.delayMs > 0) await deps.clock.sleep(throttle.delayMs);
  const signedIn = actingAs(acting, personActor(person.id));
  let method: 'otp' | 'recovery' | 'hwk' | 'swk' | undefined;
  if (proof.method === 'passkey') method = proof.verifiedUserId === person.id ? proof.amr : undefined;
  else {
    const used = await useSecondFactorCode(deps, deps.db, person.id, proof.code);
    // A code of the other kind than the form said still counts: people paste what they have.
    method = used;
  }
  if (method === undefined) {
    await throttle.failed();
    await emitted(deps, signedIn, { type: 'signin.second_factor_failed', userId: person.id });
    throw invalidField(['code'], 'MFA_CODE_INVALID', WRONG_CODE);
  }
  await throttle.succeeded();
  // Issue #39: a sign-in that passed its password before the account was disabled ends here.
  if (person.disabledAt !== null) {
    await emitted(deps, signedIn, { type: 'signin.failed', username: person.username, userId: person.id, why: 'disabled' });
    throw invalidField(['code'], ACCOUNT_DISABLED_CODE, disabledAccountMessage(deps.config.serviceName));
  }
  // RFC 8176: pwd for the password, otp for a TOTP or recovery code, mfa when two were used.
  const amr = ['pwd', method === 'recovery' ? 'otp' : method, 'mfa'];
  const usedMethod = method;
  const session = await changing(deps, signedIn, async (trx, emit) => {
    // A second completion of the same pending sign-in loses here.
    if (!(await deletePendingSignIn(trx, idHash))) throw invalidField(['code'], 'SIGN_IN_EXPIRED', PENDING_EXPIRED);
    const started = await startSessionIn(deps, signedIn, trx, pending.userAgent);
    await insertSessionMethods(trx, hashSecret(started.token), person.id, amr, deps.clock.now());
    // No session outlives its maximum age, so older records of this person are of ended sessions.
    await purgeSessionMethodsOfUser(trx, person.id, deps.clock.now() - deps.config.sessionMaxAgeMs);
    if (usedMethod === 'recovery') emit({ type: 'mfa.recovery_code_used', userId: person.id });
    emit({ type: 'signin.succeeded', userId: person.id });
    return started;
  });
  return { person, session, amr };
}

/** RFC 8176 methods of the session behind a cookie: what it recorded, else a password sign-in. */
export async function sessionMethods(deps: Deps, sessionToken: string | undefined): Promise<string[]> {
  if (!sessionToken) return ['pwd'];
  return (await findSessionMethods(deps.db, hashSecret(sessionToken))) ?? ['pwd'];
}

/**
 * Records the RFC 8176 methods of a session started outside the second step (a passwordless
 * passkey sign-in, accounts/passkeys.service.ts), inside that sign-in's transaction.
 */
export async function recordSessionMethods(db: Parameters<typeof insertSessionMethods>[0], sessionToken: string, userId: string, amr: readonly string[], now: number): Promise<void> {
  await insertSessionMethods(db, hashSecret(sessionToken), userId, amr, now);
}
