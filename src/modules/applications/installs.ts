import { PERMISSION_LABELS, Permission, has, permissionNames, type PermissionName } from '../../core/permissions.js';

/**
 * Bot installs as pure rules (SPEC §5.6 rule 6, issue #4): which of the requested permissions a
 * person can give a bot in a server, and what the bot ends up with.
 */

/**
 * What the person may grant of `requested` in a server where they hold `held`: only bits they
 * hold themselves (owners and Administrators hold every bit), and never Administrator
 * (SPEC §5.6: "the Administrator permission is never granted").
 */
export function grantablePermissions(requested: bigint, held: bigint): bigint {
  return requested & held & ~Permission.ADMINISTRATOR;
}

/** The bot's permissions: requested ∩ held by the installer ∩ still ticked, minus Administrator. */
export function grantedPermissions(requested: bigint, held: bigint, ticked: bigint): bigint {
  return grantablePermissions(requested, held) & ticked;
}

/** Why a requested permission cannot be granted, for the consent screen. */
export type NotGrantableReason = 'administrator' | 'not-held';

/** One requested permission as the consent screen lists it. */
export interface RequestedPermission {
  name: PermissionName;
  label: string;
  /** Undefined when the person can grant it (and may untick it). */
  notGrantable: NotGrantableReason | undefined;
}

/**
 * The requested permissions, grantable ones first, each in bit order and marked: Administrator is never granted; the rest
 * are grantable when the person holds them in the chosen server (`held` undefined: no server
 * chosen yet, so only Administrator is marked).
 */
export function describeRequestedPermissions(requested: bigint, held: bigint | undefined): RequestedPermission[] {
  const all = permissionNames(requested).map((name): RequestedPermission => {
    const bit = Permission[name];
    let notGrantable: NotGrantableReason | undefined;
    if (bit === Permission.ADMINISTRATOR) notGrantable = 'administrator';
    else if (held !== undefined && !has(held, bit)) notGrantable = 'not-held';
    return { name, label: PERMISSION_LABELS[name], notGrantable };
  });
  // What the person can give first, then what they cannot, then Administrator.
  const rank = (p: RequestedPermission) => (p.notGrantable === undefined ? 0 : p.notGrantable === 'not-held' ? 1 : 2);
  return all.sort((a, b) => rank(a) - rank(b));
}

/**
 * The ticked boxes of the consent form as a bitfield. Values are permission names; anything
 * else is ignored (the result is intersected with what is grantable anyway).
 */
export function tickedPermissions(values: unknown): bigint {
  const list = Array.isArray(values) ? values : values === undefined ? [] : [values];
  let bits = 0n;
  for (const value of list) {
    if (typeof value === 'string' && Object.hasOwn(Permission, value)) bits |= Permission[value as PermissionName];
  }
  return bits;
}

/**
 * What an install link asks for (issue #4): `bot` adds the app's bot to a server chosen on the
 * consent screen; `applications.commands` without `bot` is a user install.
 */
export interface InstallRequest {
  bot: boolean;
  commands: boolean;
  /** The requested permission bits (SPEC §2.1 `permissions`; 0n when absent or without bot). */
  permissions: bigint;
  /** The server to pre-select (`server_id`, or Discord's `guild_id`), exactly as sent. */
  serverId: string | undefined;
  /** `disable_server_select=true` with a server_id: the picker is locked to that server. */
  lockServer: boolean;
}

/** What the consent screen shows about an install (issue #4). */
export interface InstallConsent {
  kind: 'bot' | 'user';
  /** applications.commands was requested. */
  commands: boolean;
  /** Bot installs: the servers where the person holds Manage server (the picker's choices). */
  servers: { id: string; name: string }[];
  /** The server the permissions below are computed for; undefined until one is chosen. */
  chosenServer: { id: string; name: string } | undefined;
  /** disable_server_select: the link decides the server. */
  locked: boolean;
  /** The link locked the picker to a server the person cannot add bots to. */
  lockedUnavailable: boolean;
  /** The requested permissions, each marked as grantable or not in the chosen server. */
  permissions: RequestedPermission[];
}

/** Labels of the bits set, in bit order. */
export function permissionLabelList(bits: bigint): string[] {
  return permissionNames(bits).map((name) => PERMISSION_LABELS[name]);
}

/** An app installed in a server, as Server settings → Integrations shows it. */
export interface InstalledApp {
  application: {
    id: string;
    name: string;
    /** Never loaded by our pages (docs/consent.md: no third-party images); the initial is drawn instead. */
    iconUrl: string | null;
    botUserId: string | null;
  };
  permissions: { bits: bigint; names: PermissionName[]; labels: string[] };
  /** applications.commands was granted with bot. */
  commandsEnabled: boolean;
  /** The app's commands, listed only when commandsEnabled. */
  commands: Array<{ name: string; description: string }>;
  /** Null fields when the installer's account is gone. */
  installer: { id: string; username: string | null; name: string | null };
  installedAt: number;
  updatedAt: number;
}
