import type { ColumnType, Selectable } from 'kysely';
import type { DbBool, DbId, DbIdNullable, DbInt, DbIntNullable } from '../../storage/types.js';

/** People, bot accounts included (a bot is a user row with bot = 1 and its application's id). */
export interface UsersTable {
  id: DbId;
  username: string;
  /** Lower-cased username: the uniqueness key, so "Alice" and "alice" cannot both exist. */
  username_key: string;
  /** Display name. */
  name: string;
  email: string | null;
  email_verified: DbBool;
  avatar_url: string | null;
  /** scrypt hash; null for bot accounts, which never sign in with a password. */
  password_hash: string | null;
  bot: DbBool;
  application_id: DbIdNullable;
  created_at: DbInt;
  /** Issue #39: an instance administrator (1). */
  is_admin: ColumnType<number | bigint | string | boolean, 0 | 1 | undefined, 0 | 1>;
  /** Issue #39: when the operator disabled the account; null while it works. */
  disabled_at: ColumnType<number | bigint | string | null, number | null | undefined, number | null>;
  disabled_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** Issue #39: the client address the account was signed up from (null: the operator created it). */
  signup_address: ColumnType<string | null, string | null | undefined, string | null>;
  /** Issue #38 §4: Discord's mfa_enabled, 1 while a TOTP authenticator or a passkey is set up (kept by mfa/). */
  mfa_enabled: ColumnType<number | bigint | string | boolean, 0 | 1 | undefined, 0 | 1>;
}

/** A `users` row as a query returns it. */
export type UserRow = Selectable<UsersTable>;

export interface ServersTable {
  id: DbId;
  name: string;
  icon_url: string | null;
  owner_id: DbId;
  created_at: DbInt;
  /** Discord's guild `mfa_level` (issue #38 §4): 1 when moderators must have a second factor. */
  mfa_level: ColumnType<number | bigint | string, number | undefined, number>;
}

/** The @everyone role has the server's id, as on Discord. */
export interface RolesTable {
  id: DbId;
  server_id: DbId;
  name: string;
  /** Decimal string: permission bitfields exceed 2^53. */
  permissions: string;
  color: DbInt;
  position: DbInt;
  /** Set for a bot's managed role; such a role is edited only by installs. */
  managed_application_id: DbIdNullable;
  created_at: DbInt;
}

export interface MembersTable {
  server_id: DbId;
  user_id: DbId;
  nickname: string | null;
  joined_at: DbInt;
  /** How the membership came about (members.ts JoinedVia); only the person's own act consents to DMs. */
  joined_via: ColumnType<string, string | undefined, string>;
}

/** A pending invitation to join a server: not a membership until the person accepts it. */
export interface MemberInvitationsTable {
  id: DbId;
  server_id: DbId;
  user_id: DbId;
  inviter_id: DbId;
  /** Comma-separated role ids offered with the invitation, applied on acceptance. */
  role_ids: string;
  created_at: DbInt;
  /** Epoch ms after which it can no longer be accepted (issue #36 §3); set on every row. */
  expires_at: DbInt;
}

export interface MemberRolesTable {
  server_id: DbId;
  user_id: DbId;
  role_id: DbId;
}

/** type 0: a server text channel; type 1: a direct-message channel (server_id null). */
export interface ChannelsTable {
  id: DbId;
  server_id: DbIdNullable;
  type: DbInt;
  name: string;
  topic: string | null;
  position: DbInt;
  created_at: DbInt;
  /** Webhooks in this channel; the conditional increment enforces SPEC §8's 10 per channel. */
  webhook_count: ColumnType<number | bigint | string, number | undefined, number>;
}

/** Invite links: the code is a bearer credential, so only its hash is kept. */
export interface InvitesTable {
  id: DbId;
  code_hash: string;
  /** The code sealed under the server secret (core/sealed.ts), for the settings list; null before it was kept. */
  code_sealed: string | null;
  server_id: DbId;
  creator_id: DbId;
  max_uses: DbIntNullable;
  uses: DbInt;
  expires_at: DbIntNullable;
  created_at: DbInt;
}
