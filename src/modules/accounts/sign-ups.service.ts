import type { Transaction } from 'kysely';
import type { Acting, Who } from '../../core/acting.js';
import { DAY } from '../../core/clock.js';
import { addFieldError, ApiError } from '../../core/errors.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import type { Database } from '../../storage/database.js';
import { checkEmail } from '../directory/people.js';
import { describeInvite } from '../directory/invites.service.js';
import { LinkRefusedError } from './account-links.js';
import { checkAccountToken, issueAccountToken, useCheckedToken } from './account-tokens.service.js';
import type { AccountToken } from './account-tokens.repository.js';

/**
 * Issue #39: who may create an account on the sign-up page (GATEHOUSE_SIGN_UPS). `open`: anyone.
 * `invite`: only someone who came through a server's invite link or holds an operator's sign-up
 * link (`gatehouse people invite`: single use, stored hashed, 7 days). `closed`: nobody; the
 * operator creates accounts (`gatehouse people create`). The CLI is never limited.
 */

/** How long an operator's sign-up link works. */
export const SIGN_UP_LINK_LIFETIME_MS = 7 * DAY;

/** Sign-up links name no person yet; the account-token row's person is this placeholder id. */
const NOBODY_YET = '0';

export interface SignUpAllowance {
  mode: 'open' | 'invite' | 'closed';
  allowed: boolean;
  /** What the sign-up page says about who may sign up here (always shown when not `open`). */
  message: string | null;
  /** The sign-up link that allows it, checked but not yet used (used in the new account's commit). */
  link?: AccountToken;
}

/** The server invite code a sign-up's `next` leads to (`/invite/<code>`), if any. */
export function inviteCodeIn(next: string | undefined): string | undefined {
  const match = /^\/invite\/([A-Za-z0-9_-]{1,200})$/.exec(next ?? '');
  return match?.[1];
}

/** Whether the sign-up page may create an account, given the invite link or sign-up link it came with. */
export async function allowanceForSignUp(deps: Deps, input: { inviteCode?: string | undefined; token?: string | undefined }): Promise<SignUpAllowance> {
  const mode = deps.config.signUps;
  if (mode === 'open') return { mode, allowed: true, message: null };
  // The operator's own link works in `closed` too: it is the operator creating the account.
  if (input.token !== undefined && input.token !== '') {
    try {
      const link = await checkAccountToken(deps, input.token, 'sign-up');
      return { mode, allowed: true, message: 'You were invited by the operator: this sign-up link works once.', link };
    } catch (error) {
      if (!(error instanceof LinkRefusedError)) throw error;
      const why = error.why === 'used' ? 'has been used already' : error.why === 'expired' ? 'has expired' : 'is not valid';
      return { mode, allowed: false, message: `This sign-up link ${why}. Ask the operator of ${deps.config.serviceName} for a new one.` };
    }
  }
  if (mode === 'closed') return { mode, allowed: false, message: `New accounts on ${deps.config.serviceName} are created by its operator only. Ask them for one.` };
  if (input.inviteCode !== undefined) {
    try {
      const { server } = await describeInvite(deps, input.inviteCode);
      return { mode, allowed: true, message: `You were invited to ${server.name}: create your account to join it.` };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
  }
  return { mode, allowed: false, message: `On ${deps.config.serviceName} you need an invite to create an account: a server's invite link, or a sign-up link from the operator.` };
}

/** The refusal of a sign-up that its allowance does not allow (403, the page's sentence). */
export function signUpRefused(allowance: SignUpAllowance): ApiError {
  return new ApiError(403, 50013, allowance.message ?? 'Sign-ups are closed.', addFieldError({}, ['signUp'], { code: 'SIGN_UPS_LIMITED', message: allowance.message ?? 'Sign-ups are closed.' }));
}

/** Uses the sign-up link in the new account's transaction, so one link makes one account even under a race. */
export async function useSignUpLink(deps: Deps, trx: Transaction<Database>, link: AccountToken): Promise<void> {
  await useCheckedToken(deps, trx, link);
}

/**
 * `gatehouse people invite [--email]` (issue #39): a single-use sign-up link for `invite` (and
 * `closed`: the operator's own invitation works whatever the mode), stored hashed, printed once.
 * The address, when given, is only noted for the operator (no mail is sent).
 */
export async function createSignUpLink(deps: Deps, acting: Acting<Who>, input: { email?: string | undefined }): Promise<{ url: string; expiresAt: number; email: string | null }> {
  const checked = checkEmail(input.email);
  if (!checked.ok) throw new ApiError(400, 50035, 'Invalid Form Body', addFieldError({}, ['email'], { code: checked.code, message: checked.message }));
  const email = checked.value;
  const token = await changing(deps, acting, async (trx, emit) => {
    const plain = await issueAccountToken(deps, trx, { purpose: 'sign-up', userId: NOBODY_YET, email, lifetimeMs: SIGN_UP_LINK_LIFETIME_MS, replacing: false });
    emit({ type: 'signup_link.created', withEmail: email !== null });
    return plain;
  });
  return { url: `${deps.config.baseUrl}/register?token=${encodeURIComponent(token)}`, expiresAt: deps.clock.now() + SIGN_UP_LINK_LIFETIME_MS, email };
}
