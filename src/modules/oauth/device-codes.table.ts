import type { DbId, DbInt } from '../../storage/types.js';

/**
 * Device authorization requests (RFC 8628; issue #41 §2; migration 2026-11-29-70). `status` is
 * `pending` until the person answers on /activate, then `approved` (with `user_id`, `grant_id`)
 * or `denied`; an approved row becomes `used` when the device's poll takes its tokens.
 */
export interface OAuthDeviceCodesTable {
  /** SHA-256 of the device code (secrets hashed at rest, DESIGN §3). */
  device_code_hash: string;
  /** SHA-256 of the normalised user code (8 letters, no dash). */
  user_code_hash: string;
  application_id: DbId;
  /** Space-separated, validated at the device authorization request. */
  scopes: string;
  /** RFC 8707: the resource server asked for; null for Gatehouse's own API. */
  resource_server_id: DbId | null;
  /** The `resource` as sent (RFC 8707), resolved again when the person answers and the device polls. */
  resource: string | null;
  created_at: DbInt;
  expires_at: DbInt;
  /** RFC 8628 §3.5: the polling interval now in force, grown by 5 s at each slow_down. */
  interval_seconds: number;
  last_polled_at: DbInt | null;
  status: 'pending' | 'approved' | 'denied' | 'used';
  user_id: DbId | null;
  grant_id: DbId | null;
}
