import type { Transaction } from 'kysely';
import type { Acting, Who } from '../../core/acting.js';
import type { PersonActor } from '../../core/actor.js';
import { HOUR } from '../../core/clock.js';
import { ApiErrors, RateLimitedError } from '../../core/errors.js';
import type { BucketRule } from '../../rate-limit/bucket.js';
import type { Deps } from '../../deps.js';
import type { Emit } from '../../events/event-bus.js';
import { changing } from '../../events/event-bus.js';
import type { Database } from '../../storage/database.js';
import type { Person } from '../directory/people.js';
import { getPersonById, getPersonByUsername, saveVerifiedEmail } from '../directory/people.service.js';
import { composeMail, mailConfigured, queueMail } from '../mail/mail.service.js';
import { findPendingAccountToken } from './account-tokens.repository.js';
import { LinkRefusedError } from './account-links.js';
import { checkAccountToken, endUnusedTokens, issueAccountToken, useCheckedToken } from './account-tokens.service.js';

/** Issue #38 §2: a verification link works for 24 hours. */
export const VERIFY_LINK_LIFETIME_MS = 24 * HOUR;

/** Re-sent verification links per person: a few an hour (each one is a mail to an address nobody proved yet). */
const RESEND_RULE: BucketRule = { limit: 3, windowMs: HOUR };

/**
 * Issues a verification link for `email` and queues its mail in `trx` (issue #38 §2: the mail
 * exists exactly when the change that asks for it committed). `pending`: the address is not the
 * person's yet (a change waits for it). Without mail nothing is issued: no link could arrive.
 */
export async function sendVerification(deps: Deps, trx: Transaction<Database>, emit: Emit, person: Pick<Person, 'id' | 'username'>, email: string, pending: boolean): Promise<void> {
  if (!mailConfigured(deps)) return;
  const token = await issueAccountToken(deps, trx, { purpose: 'verify-email', userId: person.id, email, lifetimeMs: VERIFY_LINK_LIFETIME_MS, replacing: true });
  const service = deps.config.serviceName;
  const content = composeMail({
    serviceName: service,
    baseUrl: deps.config.baseUrl,
    why: pending ? `someone signed in as @${person.username} asked to use this address.` : `this address was given for the account @${person.username}.`,
    lines: [`Please confirm that ${email} is your e-mail address on ${service}. The link works once, for 24 hours.`],
    link: { text: 'Verify this address', url: `/verify-email?token=${encodeURIComponent(token)}` },
  });
  await queueMail(deps, trx, { to: email, subject: `Verify your e-mail address for ${service}`, ...content });
  emit({ type: 'email.verification_sent', userId: person.id, pending });
}

/** The address a person's newest unused link would verify, when it is not their address yet (Settings → Profile shows it). */
export async function pendingEmail(deps: Deps, person: Pick<Person, 'id' | 'email'>): Promise<string | null> {
  const token = await findPendingAccountToken(deps.db, person.id, 'verify-email', deps.clock.now());
  if (!token || token.email === null || token.email.toLowerCase() === person.email?.toLowerCase()) return null;
  return token.email;
}

export interface VerificationLink {
  email: string;
  username: string;
}

/**
 * What a verification link would verify, for its page (GET shows a button; only the POST uses
 * the link, so a mail scanner that fetches links uses nothing). Refused with LinkRefusedError
 * when unknown, used, expired, or of another person than the one signed in (`viewerId`).
 */
export async function readVerificationLink(deps: Deps, token: string, viewerId: string | null): Promise<VerificationLink> {
  const link = await checkAccountToken(deps, token, 'verify-email');
  if (viewerId !== null && viewerId !== link.userId) throw new LinkRefusedError('foreign');
  const person = await getPersonById(deps, link.userId);
  if (!person || link.email === null) throw new LinkRefusedError('unknown');
  return { email: link.email, username: person.username };
}

/**
 * Uses a verification link (issue #38 §2): its address becomes the person's, verified. When it
 * replaces another address, that old address is told by mail, and email.changed is recorded.
 * `acting` is whoever holds the link (signed in or not); a person signed in as someone else is
 * refused (`foreign`), so one cannot verify another account's address into one's own session.
 */
export async function verifyEmail(deps: Deps, acting: Acting<Who>, token: string): Promise<VerificationLink> {
  const viewerId = acting.actor.kind === 'person' ? acting.actor.id : null;
  const found = await readVerificationLink(deps, token, viewerId);
  const link = await checkAccountToken(deps, token, 'verify-email');
  const person = await getPersonById(deps, link.userId);
  if (!person) throw new LinkRefusedError('unknown');
  const email = link.email as string;
  const old = person.email;
  const changed = old !== null && old.toLowerCase() !== email.toLowerCase();
  await changing(deps, acting, async (trx, emit) => {
    await useCheckedToken(deps, trx, link);
    await saveVerifiedEmail(trx, person.id, email);
    await endUnusedTokens(trx, person.id, 'verify-email');
    emit({ type: 'email.verified', userId: person.id });
    if (changed) {
      emit({ type: 'email.changed', userId: person.id });
      const service = deps.config.serviceName;
      const content = composeMail({
        serviceName: service,
        baseUrl: deps.config.baseUrl,
        why: `this was the e-mail address of the account @${person.username}.`,
        lines: [
          `The e-mail address of your ${service} account @${person.username} was changed to ${email}; mail for the account now goes there.`,
          'If you did not make this change, reset your password and tell the operator of this server.',
        ],
        link: { text: 'Reset your password', url: '/forgot-password' },
      });
      await queueMail(deps, trx, { to: old, subject: `Your ${service} e-mail address was changed`, ...content });
    }
  });
  return found;
}

/**
 * Sends a new link to the address waiting for verification (the pending one, else the person's
 * unverified address); at most RESEND_RULE per person. Returns the address it went to.
 */
export async function resendVerification(deps: Deps, acting: Acting<PersonActor>): Promise<string> {
  const person = await getPersonById(deps, acting.actor.id);
  if (!person || person.bot) throw ApiErrors.unknownUser();
  const email = (await pendingEmail(deps, person)) ?? (person.emailVerified ? null : person.email);
  if (email === null) throw new LinkRefusedError('unknown');
  const allowed = await deps.buckets.take(`verify:resend:${person.id}`, RESEND_RULE, deps.clock.now());
  if (!allowed.allowed) throw new RateLimitedError(allowed.resetAfterMs, 'Too many verification links were sent.');
  await changing(deps, acting, async (trx, emit) => sendVerification(deps, trx, emit, person, email, email !== person.email));
  return email;
}

/**
 * `gatehouse people verify-email --username` (issue #38 §2): the operator marks the person's
 * current address verified, without a link. Refused when the person has no address.
 */
export async function markEmailVerified(deps: Deps, acting: Acting<Who>, username: string): Promise<Person> {
  const person = await getPersonByUsername(deps, username);
  if (!person || person.bot) throw ApiErrors.unknownUser();
  if (person.email === null) throw ApiErrors.invalidFormBody({ username: { _errors: [{ code: 'EMAIL_MISSING', message: 'This person has no e-mail address to verify.' }] } });
  if (person.emailVerified) return person;
  const email = person.email;
  await changing(deps, acting, async (trx, emit) => {
    await saveVerifiedEmail(trx, person.id, email);
    emit({ type: 'email.verified', userId: person.id });
  });
  return { ...person, emailVerified: true };
}

