/**
 * Permission bitfields with Discord's bit positions (issue #2 §6), as bigint because they exceed
 * 2^53; on the wire and in storage they travel as decimal strings. "Guild" is "server" here.
 */
export const Permission = {
  CREATE_INSTANT_INVITE: 1n << 0n,
  KICK_MEMBERS: 1n << 1n,
  BAN_MEMBERS: 1n << 2n,
  ADMINISTRATOR: 1n << 3n,
  MANAGE_CHANNELS: 1n << 4n,
  MANAGE_SERVER: 1n << 5n,
  ADD_REACTIONS: 1n << 6n,
  VIEW_AUDIT_LOG: 1n << 7n,
  PRIORITY_SPEAKER: 1n << 8n,
  STREAM: 1n << 9n,
  VIEW_CHANNEL: 1n << 10n,
  SEND_MESSAGES: 1n << 11n,
  SEND_TTS_MESSAGES: 1n << 12n,
  MANAGE_MESSAGES: 1n << 13n,
  EMBED_LINKS: 1n << 14n,
  ATTACH_FILES: 1n << 15n,
  READ_MESSAGE_HISTORY: 1n << 16n,
  MENTION_EVERYONE: 1n << 17n,
  USE_EXTERNAL_EMOJIS: 1n << 18n,
  VIEW_SERVER_INSIGHTS: 1n << 19n,
  CONNECT: 1n << 20n,
  SPEAK: 1n << 21n,
  MUTE_MEMBERS: 1n << 22n,
  DEAFEN_MEMBERS: 1n << 23n,
  MOVE_MEMBERS: 1n << 24n,
  USE_VAD: 1n << 25n,
  CHANGE_NICKNAME: 1n << 26n,
  MANAGE_NICKNAMES: 1n << 27n,
  MANAGE_ROLES: 1n << 28n,
  MANAGE_WEBHOOKS: 1n << 29n,
  MANAGE_SERVER_EXPRESSIONS: 1n << 30n,
  USE_APPLICATION_COMMANDS: 1n << 31n,
  REQUEST_TO_SPEAK: 1n << 32n,
  MANAGE_EVENTS: 1n << 33n,
  MANAGE_THREADS: 1n << 34n,
  CREATE_PUBLIC_THREADS: 1n << 35n,
  CREATE_PRIVATE_THREADS: 1n << 36n,
  USE_EXTERNAL_STICKERS: 1n << 37n,
  SEND_MESSAGES_IN_THREADS: 1n << 38n,
  USE_EMBEDDED_ACTIVITIES: 1n << 39n,
  MODERATE_MEMBERS: 1n << 40n,
  VIEW_CREATOR_MONETIZATION_ANALYTICS: 1n << 41n,
  USE_SOUNDBOARD: 1n << 42n,
  CREATE_SERVER_EXPRESSIONS: 1n << 43n,
  CREATE_EVENTS: 1n << 44n,
  USE_EXTERNAL_SOUNDS: 1n << 45n,
  SEND_VOICE_MESSAGES: 1n << 46n,
  SEND_POLLS: 1n << 49n,
  USE_EXTERNAL_APPS: 1n << 50n,
} as const;
export type PermissionName = keyof typeof Permission;

export const ALL_PERMISSIONS: bigint = Object.values(Permission).reduce((all, bit) => all | bit, 0n);

/** What a new server's @everyone role holds, like Discord's defaults for a fresh guild. */
export const DEFAULT_EVERYONE_PERMISSIONS: bigint =
  Permission.CREATE_INSTANT_INVITE |
  Permission.ADD_REACTIONS |
  Permission.VIEW_CHANNEL |
  Permission.SEND_MESSAGES |
  Permission.EMBED_LINKS |
  Permission.ATTACH_FILES |
  Permission.READ_MESSAGE_HISTORY |
  Permission.USE_EXTERNAL_EMOJIS |
  Permission.CHANGE_NICKNAME |
  Permission.USE_APPLICATION_COMMANDS;

/** Plain-words labels for pages (consent screen, role editor). */
export const PERMISSION_LABELS: Record<PermissionName, string> = {
  CREATE_INSTANT_INVITE: 'Create invite',
  KICK_MEMBERS: 'Kick members',
  BAN_MEMBERS: 'Ban members',
  ADMINISTRATOR: 'Administrator',
  MANAGE_CHANNELS: 'Manage channels',
  MANAGE_SERVER: 'Manage server',
  ADD_REACTIONS: 'Add reactions',
  VIEW_AUDIT_LOG: 'View audit log',
  PRIORITY_SPEAKER: 'Priority speaker',
  STREAM: 'Video',
  VIEW_CHANNEL: 'View channels',
  SEND_MESSAGES: 'Send messages',
  SEND_TTS_MESSAGES: 'Send text-to-speech messages',
  MANAGE_MESSAGES: 'Manage messages',
  EMBED_LINKS: 'Embed links',
  ATTACH_FILES: 'Attach files',
  READ_MESSAGE_HISTORY: 'Read message history',
  MENTION_EVERYONE: 'Mention @everyone and @here',
  USE_EXTERNAL_EMOJIS: 'Use external emoji',
  VIEW_SERVER_INSIGHTS: 'View server insights',
  CONNECT: 'Connect (voice)',
  SPEAK: 'Speak (voice)',
  MUTE_MEMBERS: 'Mute members',
  DEAFEN_MEMBERS: 'Deafen members',
  MOVE_MEMBERS: 'Move members',
  USE_VAD: 'Use voice activity',
  CHANGE_NICKNAME: 'Change nickname',
  MANAGE_NICKNAMES: 'Manage nicknames',
  MANAGE_ROLES: 'Manage roles',
  MANAGE_WEBHOOKS: 'Manage webhooks',
  MANAGE_SERVER_EXPRESSIONS: 'Manage expressions',
  USE_APPLICATION_COMMANDS: 'Use application commands',
  REQUEST_TO_SPEAK: 'Request to speak',
  MANAGE_EVENTS: 'Manage events',
  MANAGE_THREADS: 'Manage threads',
  CREATE_PUBLIC_THREADS: 'Create public threads',
  CREATE_PRIVATE_THREADS: 'Create private threads',
  USE_EXTERNAL_STICKERS: 'Use external stickers',
  SEND_MESSAGES_IN_THREADS: 'Send messages in threads',
  USE_EMBEDDED_ACTIVITIES: 'Use activities',
  MODERATE_MEMBERS: 'Time out members',
  VIEW_CREATOR_MONETIZATION_ANALYTICS: 'View monetization analytics',
  USE_SOUNDBOARD: 'Use soundboard',
  CREATE_SERVER_EXPRESSIONS: 'Create expressions',
  CREATE_EVENTS: 'Create events',
  USE_EXTERNAL_SOUNDS: 'Use external sounds',
  SEND_VOICE_MESSAGES: 'Send voice messages',
  SEND_POLLS: 'Create polls',
  USE_EXTERNAL_APPS: 'Use external apps',
};

export function has(permissions: bigint, bit: bigint): boolean {
  return (permissions & bit) === bit;
}

/** The names of the bits set in a bitfield, in bit order. */
export function permissionNames(permissions: bigint): PermissionName[] {
  return (Object.keys(Permission) as PermissionName[]).filter((name) => has(permissions, Permission[name]));
}

/**
 * Parses a decimal permission string from the wire. Unknown bits are dropped rather than refused,
 * as Discord does, so links made for a newer permission set still work. Returns undefined for
 * anything that is not a non-negative decimal integer below 2^64.
 */
export function parsePermissions(value: string | number | undefined | null): bigint | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : '') : value.trim();
  if (!/^[0-9]{1,20}$/.test(text)) return undefined;
  const bits = BigInt(text);
  if (bits >= 1n << 64n) return undefined;
  return bits & ALL_PERMISSIONS;
}

export function formatPermissions(permissions: bigint): string {
  return permissions.toString();
}

export interface MemberPermissionInput {
  /** Is this person the server's owner? */
  isOwner: boolean;
  /** The @everyone role's bits, which every member holds. */
  everyone: bigint;
  /** The bits of every other role the member has. */
  roles: readonly bigint[];
}

/**
 * A member's server-wide permissions: the owner holds everything; otherwise the union of
 * @everyone and every role; Administrator implies everything (Discord's base permissions).
 */
export function computePermissions(input: MemberPermissionInput): bigint {
  if (input.isOwner) return ALL_PERMISSIONS;
  const union = input.roles.reduce((acc, bits) => acc | bits, input.everyone);
  if (has(union, Permission.ADMINISTRATOR)) return ALL_PERMISSIONS;
  return union;
}
