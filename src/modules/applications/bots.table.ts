import type { DbBool, DbId, DbIdNullable, DbInt, DbIntNullable } from '../../storage/types.js';

/** Application commands: global (PUT /api/v1/applications/{id}/commands) or one server's (…/guilds/{guild_id}/commands). */
export interface ApplicationCommandsTable {
  id: DbId;
  application_id: DbId;
  name: string;
  description: string;
  /** JSON array of Discord-style option objects; '[]' when none. */
  options: string;
  /** 1: chat input (slash) command, as Discord's type 1. */
  type: DbInt;
  created_at: DbInt;
  /** Discord's `default_member_permissions` (decimal bits a member needs in a server); null: none. */
  default_member_permissions: string | null;
  /** Discord's `integration_types` as a bit set (bit 0 server install, bit 1 user install); null: both. */
  integration_types: DbIntNullable;
  /** Discord's `contexts` as a bit set (bit 0 server channel, bit 1 DM with the bot, bit 2 group DM); null: all. */
  contexts: DbIntNullable;
  /** The server of a guild command (Discord's `guild_id`); null: a global command. */
  guild_id: DbIdNullable;
}

/**
 * A bot (and optionally its commands) installed into a server through the consent screen
 * (SPEC §1.3). The bot's managed role holds the granted permissions; this row records them and
 * who installed it, for Server settings → Integrations.
 */
export interface ServerInstallsTable {
  application_id: DbId;
  server_id: DbId;
  installer_id: DbId;
  /** Decimal string: requested ∩ held by the installer ∩ still ticked, minus Administrator. */
  permissions: string;
  /** 1 when applications.commands was granted with bot: the commands are available in the server. */
  commands: DbBool;
  created_at: DbInt;
  updated_at: DbInt;
}

/** applications.commands without bot: a user install (SPEC §5.2). */
export interface UserInstallsTable {
  application_id: DbId;
  user_id: DbId;
  created_at: DbInt;
}

/** Direct-message channels (channels.type = 1) between two users, stored low id first. */
export interface DmChannelsTable {
  channel_id: DbId;
  user_low: DbId;
  user_high: DbId;
}
