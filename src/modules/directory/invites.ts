import { Permission } from '../../core/permissions.js';

/**
 * An invite link's stored record. Its code is found by hash; it is also kept sealed under the server
 * secret so the settings list can show it again (issue #24), never in plain text.
 */
export interface Invite {
  id: string;
  serverId: string;
  creatorId: string;
  maxUses: number | null;
  uses: number;
  expiresAt: number | null;
  createdAt: number;
}

/** An invite as the settings list shows it: `code` is null when it cannot be shown (kept before codes were, or sealed under a secret no longer configured). */
export interface ListedInvite extends Invite {
  code: string | null;
  /** Whether its creator may still create invites there (issue #36 §3); when not, the link no longer works. */
  creatorCanInvite: boolean;
}

/** Why a link cannot be used: its lifetime is over, its uses are, or its creator may no longer invite. */
export type InviteProblem = 'expired' | 'used-up' | 'creator-cannot-invite';

/** Choices offered on the invite form, like Discord's: 30 min, 1 h, 6 h, 12 h, 1 day, 7 days, never. */
export const INVITE_EXPIRY_CHOICES_MS: readonly number[] = [30 * 60_000, 3_600_000, 6 * 3_600_000, 12 * 3_600_000, 86_400_000, 7 * 86_400_000];
/** Discord's default: an invite link lasts 7 days. */
export const DEFAULT_INVITE_LIFETIME_MS = 7 * 86_400_000;
export const INVITE_MAX_USES_LIMIT = 100;
/** 128 random bits: the floor for bearer secrets (DESIGN §3), in a link short enough to paste. */
export const INVITE_CODE_BYTES = 16;

/**
 * Why an invite cannot be used, or undefined when it can. Issue #36 §3: a link grants what its
 * creator could grant (membership, which needs Create invite or Manage server); once the creator
 * is removed or loses both, their links stop working, as invitations by username do.
 */
export function inviteProblem(invite: Pick<Invite, 'maxUses' | 'uses' | 'expiresAt'>, now: number, creatorCanInvite = true): InviteProblem | undefined {
  if (invite.expiresAt !== null && invite.expiresAt <= now) return 'expired';
  if (invite.maxUses !== null && invite.uses >= invite.maxUses) return 'used-up';
  if (!creatorCanInvite) return 'creator-cannot-invite';
  return undefined;
}

/** Whether permissions held in a server (undefined: not a member) let one create invite links there. */
export function canCreateInvites(held: bigint | undefined): boolean {
  return held !== undefined && (held & (Permission.CREATE_INSTANT_INVITE | Permission.MANAGE_SERVER)) !== 0n;
}

/** The form's lifetime choice ('never' or seconds from the offered list) in ms, null for never; undefined when not offered. */
export function parseInviteLifetime(text: string | undefined): number | null | undefined {
  if (text === undefined || text === '') return DEFAULT_INVITE_LIFETIME_MS;
  if (text === 'never') return null;
  if (!/^[0-9]{1,7}$/.test(text)) return undefined;
  const ms = Number(text) * 1000;
  return INVITE_EXPIRY_CHOICES_MS.includes(ms) ? ms : undefined;
}

/** The form's maximum uses: '' for no limit, else 1–100; undefined when it is neither. */
export function parseInviteMaxUses(text: string | undefined): number | null | undefined {
  if (text === undefined || text === '') return null;
  if (!/^[0-9]{1,3}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= INVITE_MAX_USES_LIMIT ? n : undefined;
}
