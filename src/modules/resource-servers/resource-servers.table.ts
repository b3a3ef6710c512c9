import type { DbId, DbInt } from '../../storage/types.js';

/**
 * Resource servers (issue #41 §1): an API an application serves, that Gatehouse issues tokens for
 * (RFC 8707 audiences). `identifier` is the resource indicator clients send, unique across the
 * instance; the owning application is the one that may introspect its tokens.
 */
export interface ResourceServersTable {
  id: DbId;
  application_id: DbId;
  /** The absolute URL clients send as `resource`, as new URL(…).href writes it. */
  identifier: string;
  /** JSON array of `{ name, description }`: the scopes this API defines, with their consent-screen lines. */
  scopes: string;
  /** `opaque` (the default). */
  access_token_format: string;
  /** RFC 8693 (issue #41): space-separated Gatehouse scopes it may use for the person (token exchange); empty: none. */
  delegated_scopes?: string;
  created_at: DbInt;
}
