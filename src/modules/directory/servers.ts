/** A server (Discord's guild) as the domain sees it. */
export interface Server {
  id: string;
  name: string;
  iconUrl: string | null;
  ownerId: string;
  createdAt: number;
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

/** A trimmed server name, or an error message saying what is wrong with it. */
export function validateServerName(raw: string): { ok: true; value: string } | { ok: false; message: string } {
  const value = raw.trim();
  const length = codePointLength(value);
  if (length < SERVER_NAME_MIN_LENGTH || length > SERVER_NAME_MAX_LENGTH) {
    return { ok: false, message: `A server name is ${SERVER_NAME_MIN_LENGTH}–${SERVER_NAME_MAX_LENGTH} characters.` };
  }
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
