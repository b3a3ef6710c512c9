import type { Transaction } from 'kysely';
import type { Acting, Who } from '../../core/acting.js';
import { HOUR, MINUTE } from '../../core/clock.js';
import { addFieldError, ApiErrors, RateLimitedError } from '../../core/errors.js';
import { hashPassword } from '../../core/password.js';
import type { BucketRule } from '../../rate-limit/bucket.js';
import type { Deps } from '../../deps.js';
import { changing, type Emit } from '../../events/event-bus.js';
import type { Database } from '../../storage/database.js';
import { checkEmail, checkPassword, type Person } from '../directory/people.js';
import { getPeopleByEmail, getPersonById, getPersonByUsername, savePasswordHash } from '../directory/people.service.js';
import { composeMail, queueMail } from '../mail/mail.service.js';
import { checkAccountToken, endUnusedTokens, issueAccountToken, useCheckedToken } from './account-tokens.service.js';
import { deleteSessionsOfUser } from './sessions.repository.js';
import { addressBlock } from './sign-in-throttle.js';
import { ACCOUNT_DISABLED_CODE, disabledAccountMessage } from './disabled-accounts.js';

/** Issue #38 §3: a reset link works once, for 30 minutes. */
export const RESET_LINK_LIFETIME_MS = 30 * MINUTE;

/**
 * Issue #38 §3, throttles of "Forgot password?" (in the shared bucket store, as sign-in's):
 *  - per address (IPv6 by /64): 10 requests an hour, whatever the e-mail addresses typed;
 *  - per e-mail address typed: 3 an hour, known or not, so the refusal says nothing about accounts;
 *  - per account: 3 mails an hour; past it the answer stays the same and no mail goes out, so
 *    nobody can flood a person's inbox by typing their address from many sources.
 */
const RESET_ADDRESS_RULE: BucketRule = { limit: 10, windowMs: HOUR };
const RESET_EMAIL_RULE: BucketRule = { limit: 3, windowMs: HOUR };
const RESET_ACCOUNT_RULE: BucketRule = { limit: 3, windowMs: HOUR };

export const RESET_THROTTLED_MESSAGE = 'Too many password reset requests.';

/**
 * "Forgot password?" (issue #38 §3). The answer is the same whether or not an account has the
 * address (the caller shows one message): each person with that address gets a mail with a
 * single-use link, queued in the same transaction as the link. Bad input (not an address) is a
 * 50035; too many requests a RateLimitedError, keyed on what was typed, never on what exists.
 */
export async function requestPasswordReset(deps: Deps, acting: Acting<Who>, input: { email: string }): Promise<void> {
  const checked = checkEmail(input.email);
  if (!checked.ok || checked.value === null) {
    const message = checked.ok ? 'Enter the e-mail address of your account.' : checked.message;
    throw ApiErrors.invalidFormBody(addFieldError({}, ['email'], { code: checked.ok ? 'BASE_TYPE_REQUIRED' : checked.code, message }));
  }
  const email = checked.value;
  const now = deps.clock.now();
  if (acting.address !== null) {
    const byAddress = await deps.buckets.take(`reset:address:${addressBlock(acting.address)}`, RESET_ADDRESS_RULE, now);
    if (!byAddress.allowed) throw new RateLimitedError(byAddress.resetAfterMs, RESET_THROTTLED_MESSAGE);
  }
  const byEmail = await deps.buckets.take(`reset:email:${email.toLowerCase()}`, RESET_EMAIL_RULE, now);
  if (!byEmail.allowed) throw new RateLimitedError(byEmail.resetAfterMs, RESET_THROTTLED_MESSAGE);
  for (const person of await getPeopleByEmail(deps, email)) {
    // Issue #39: a disabled account gets no reset link (the answer stays the same for the asker).
    if (person.disabledAt !== null) continue;
    const byAccount = await deps.buckets.take(`reset:account:${person.id}`, RESET_ACCOUNT_RULE, now);
    if (!byAccount.allowed) continue;
    await changing(deps, acting, async (trx, emit) => {
      const token = await issueAccountToken(deps, trx, { purpose: 'reset-password', userId: person.id, email: null, lifetimeMs: RESET_LINK_LIFETIME_MS, replacing: false });
      const service = deps.config.serviceName;
      const content = composeMail({
        serviceName: service,
        baseUrl: deps.config.baseUrl,
        why: `someone asked to reset the password of the account @${person.username}, which has this address.`,
        lines: [
          `To choose a new password for @${person.username}, open the link below. It works once, for 30 minutes.`,
          'Resetting your password signs you out everywhere; if you use a second factor, it is still asked when you sign in.',
        ],
        link: { text: 'Choose a new password', url: `/reset-password?token=${encodeURIComponent(token)}` },
      });
      await queueMail(deps, trx, { to: person.email ?? email, subject: `Reset your ${service} password`, ...content });
      emit({ type: 'password.reset_requested', userId: person.id, by: 'mail' });
    });
  }
}

/** Whose password a reset link would set, for its page; LinkRefusedError when unknown, used or expired. */
export async function readResetLink(deps: Deps, token: string): Promise<{ username: string }> {
  const link = await checkAccountToken(deps, token, 'reset-password');
  const person = await getPersonById(deps, link.userId);
  if (!person) throw ApiErrors.unknownUser();
  return { username: person.username };
}

export interface PasswordReset {
  token: string;
  newPassword: string;
  confirmPassword?: string | undefined;
}

function checkNewPassword(newPassword: string, confirmPassword: string | undefined): string {
  const checked = checkPassword(newPassword);
  const errors = {};
  if (!checked.ok) addFieldError(errors, ['newPassword'], { code: checked.code, message: checked.message });
  if (confirmPassword !== undefined && confirmPassword !== newPassword) {
    addFieldError(errors, ['confirmPassword'], { code: 'PASSWORD_MISMATCH', message: 'The two new passwords do not match.' });
  }
  if (Object.keys(errors).length > 0 || !checked.ok) throw ApiErrors.invalidFormBody(errors);
  return checked.value;
}

/**
 * Sets a new password through a reset link (issue #38 §3): the same rules as sign-up, the link
 * used once, every session ended (the person's and any thief's), nothing else revoked (grants and
 * tokens stay), and nobody signed in: the person signs in again, so a second factor is still asked.
 * The link is checked before the password is hashed and used in the transaction that stores it.
 */
export async function resetPassword(deps: Deps, acting: Acting<Who>, input: PasswordReset): Promise<{ username: string; endedSessions: number }> {
  const link = await checkAccountToken(deps, input.token, 'reset-password');
  const password = checkNewPassword(input.newPassword, input.confirmPassword);
  const person = await getPersonById(deps, link.userId);
  if (!person || person.bot) throw ApiErrors.unknownUser();
  // Issue #39: a link issued before the account was disabled sets no password while it is.
  if (person.disabledAt !== null) throw ApiErrors.invalidFormBody(addFieldError({}, ['password'], { code: ACCOUNT_DISABLED_CODE, message: disabledAccountMessage(deps.config.serviceName) }));
  const passwordHash = await hashPassword(password, deps.config.passwordCost);
  const endedSessions = await changing(deps, acting, async (trx, emit) => {
    await useCheckedToken(deps, trx, link);
    return storeResetPassword(trx, emit, person.id, passwordHash, 'link');
  });
  return { username: person.username, endedSessions };
}

async function storeResetPassword(
  trx: Transaction<Database>,
  emit: Emit,
  userId: string,
  passwordHash: string,
  by: 'link' | 'operator',
): Promise<number> {
  await savePasswordHash(trx, userId, passwordHash);
  await endUnusedTokens(trx, userId, 'reset-password');
  const ended = await deleteSessionsOfUser(trx, userId);
  emit({ type: 'password.reset', userId, by });
  if (ended > 0) {
    emit({ type: 'session.ended', userId, why: 'password-reset' });
    // Issue #36 §1: the live views of the browsers just signed out end now.
    emit({ type: 'access.changed', topicId: userId });
  }
  return ended;
}

async function personNamed(deps: Deps, username: string): Promise<Person> {
  const person = await getPersonByUsername(deps, username);
  if (!person || person.bot) throw ApiErrors.unknownUser();
  return person;
}

/** `gatehouse people set-password` (issue #38 §3): the operator sets a password (sign-up's rules); every session ends. */
export async function setPasswordByOperator(deps: Deps, acting: Acting<Who>, input: { username: string; password: string }): Promise<{ person: Person; endedSessions: number }> {
  const person = await personNamed(deps, input.username);
  const password = checkNewPassword(input.password, undefined);
  const passwordHash = await hashPassword(password, deps.config.passwordCost);
  const endedSessions = await changing(deps, acting, async (trx, emit) => storeResetPassword(trx, emit, person.id, passwordHash, 'operator'));
  return { person, endedSessions };
}

/**
 * `gatehouse people reset-password` (issue #38 §3): a one-time reset link for the operator to
 * hand over, no mail needed. The URL is printed once and stored only hashed.
 */
export async function operatorResetLink(deps: Deps, acting: Acting<Who>, username: string): Promise<{ person: Person; resetUrl: string; expiresAt: number }> {
  const person = await personNamed(deps, username);
  const token = await changing(deps, acting, async (trx, emit) => {
    const plain = await issueAccountToken(deps, trx, { purpose: 'reset-password', userId: person.id, email: null, lifetimeMs: RESET_LINK_LIFETIME_MS, replacing: false });
    emit({ type: 'password.reset_requested', userId: person.id, by: 'operator' });
    return plain;
  });
  return { person, resetUrl: `${deps.config.baseUrl}/reset-password?token=${encodeURIComponent(token)}`, expiresAt: deps.clock.now() + RESET_LINK_LIFETIME_MS };
}
