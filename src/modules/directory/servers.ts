import { actorNameProblem } from '../../core/names.js';

/** A server (Discord's guild) as the domain sees it. */
export interface Server {
  id: string;
  name: string;
  iconUrl: string | null;
  ownerId: string;
  createdAt: number;
  /** Discord's `mfa_level` (issue #38 §4): 1 when moderators must have a second factor. */
  mfaLevel: 0 | 1;
}

/** Discord's guild name limits: 2–100 characters. */
export const SERVER_NAME_MIN_LENGTH = 2;
export const SERVER_NAME_MAX_LENGTH = 100;

/** The name of the text channel every new server starts with, as on Discord. */
export const DEFAULT_CHANNEL_NAME = 'general';

/** Counts Unicode code points, not UTF-16 units, so an emoji counts as one character. */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/**
 * A trimmed server name, or the error code and a message saying what is wrong with it. Issue #21
 * §4: a server speaks under its name in invitations and invite pages ("… invited you to join
 * <name>"), so the actor-name rule of core/names.ts applies: no invisible or text-direction
 * character, and not one that passes for the service.
 */
export function validateServerName(raw: string, serviceName: string): { ok: true; value: string } | { ok: false; code: string; message: string } {
  const value = raw.trim();
  const length = codePointLength(value);
  if (length < SERVER_NAME_MIN_LENGTH || length > SERVER_NAME_MAX_LENGTH) {
    return { ok: false, code: 'BASE_TYPE_BAD_LENGTH', message: `A server name is ${SERVER_NAME_MIN_LENGTH}–${SERVER_NAME_MAX_LENGTH} characters.` };
  }
  const problem = actorNameProblem(value, serviceName);
  if (problem?.kind === 'invisible') return { ok: false, code: 'BASE_TYPE_INVALID', message: problem.message };
  if (problem !== undefined) return { ok: false, code: 'NAME_RESERVED', message: `${problem.message}.` };
  return { ok: true, value };
}

/** What deleting a server removes with it, counted (the confirmation page states it). */
export interface ServerContents {
  channels: number;
  messages: number;
  webhooks: number;
  /** Roles besides @everyone, the managed roles of bots included. */
  roles: number;
  /** Members besides the owner, bot accounts included. */
  members: number;
  botInstalls: number;
  pendingInvitations: number;
  inviteLinks: number;
}
