import type { ColumnType } from 'kysely';
import type { DbBool, DbId, DbIdNullable, DbInt } from '../../storage/types.js';

/** OAuth2 applications. The client_id is the application's id (as on Discord). */
export interface ApplicationsTable {
  id: DbId;
  owner_id: DbId;
  name: string;
  description: string;
  icon_url: string | null;
  /** 1: confidential (has a client secret); 0: public (PKCE S256 mandatory). */
  confidential: DbBool;
  /** SHA-256 of the client secret; null for public apps. */
  client_secret_hash: string | null;
  /** JSON array of the exact registered redirect URIs. */
  redirect_uris: string;
  /** "Public bot": anyone may install it; when 0 only the owner can. */
  bot_public: DbBool;
  /** "Require full OAuth2 authorization" for bot installs. */
  bot_require_code_grant: DbBool;
  /** The bot account (a users row with bot = 1), when the app has a bot. */
  bot_user_id: DbIdNullable;
  bot_token_hash: string | null;
  created_at: DbInt;
  updated_at: DbInt;
  /** Issue #39: when the operator disabled the app (tokens revoked, bot inert); null while it works. */
  disabled_at: ColumnType<number | bigint | string | null, number | null | undefined, number | null>;
  disabled_reason: ColumnType<string | null, string | null | undefined, string | null>;
}
