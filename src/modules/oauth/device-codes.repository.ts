import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId, toIdOrNull, toNum, toNumOrNull } from '../../storage/types.js';
import type { OAuthDeviceCodesTable } from './device-codes.table.js';
import { insertAccessToken, insertRefreshToken } from './tokens.repository.js';
import type { TokenPair } from './token-writes.repository.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A device authorization request as stored (device-codes.table.ts). */
export interface DeviceCode {
  deviceCodeHash: string;
  applicationId: string;
  scopes: string[];
  resourceServerId: string | null;
  resource: string | null;
  createdAt: number;
  expiresAt: number;
  intervalSeconds: number;
  lastPolledAt: number | null;
  status: 'pending' | 'approved' | 'denied' | 'used';
  userId: string | null;
  grantId: string | null;
}

function toDeviceCode(row: Selectable<OAuthDeviceCodesTable>): DeviceCode {
  return {
    deviceCodeHash: row.device_code_hash,
    applicationId: toId(row.application_id),
    scopes: row.scopes === '' ? [] : row.scopes.split(' '),
    resourceServerId: toIdOrNull(row.resource_server_id),
    resource: row.resource,
    createdAt: toNum(row.created_at),
    expiresAt: toNum(row.expires_at),
    intervalSeconds: Number(row.interval_seconds),
    lastPolledAt: toNumOrNull(row.last_polled_at),
    status: row.status,
    userId: toIdOrNull(row.user_id),
    grantId: toIdOrNull(row.grant_id),
  };
}

export interface NewDeviceCode {
  deviceCodeHash: string;
  userCodeHash: string;
  applicationId: string;
  scopes: readonly string[];
  resourceServerId: string | null;
  resource: string | null;
  createdAt: number;
  expiresAt: number;
  intervalSeconds: number;
}

export async function insertDeviceCode(db: Db, code: NewDeviceCode): Promise<void> {
  await db
    .insertInto('oauth_device_codes')
    .values({
      device_code_hash: code.deviceCodeHash,
      user_code_hash: code.userCodeHash,
      application_id: code.applicationId,
      scopes: code.scopes.join(' '),
      resource_server_id: code.resourceServerId,
      resource: code.resource,
      created_at: code.createdAt,
      expires_at: code.expiresAt,
      interval_seconds: code.intervalSeconds,
      last_polled_at: null,
      status: 'pending',
      user_id: null,
      grant_id: null,
    })
    .execute();
}

export async function findDeviceCode(db: Db, deviceCodeHash: string): Promise<DeviceCode | undefined> {
  const row = await db.selectFrom('oauth_device_codes').selectAll().where('device_code_hash', '=', deviceCodeHash).executeTakeFirst();
  return row ? toDeviceCode(row) : undefined;
}

export async function findDeviceCodeByUserCode(db: Db, userCodeHash: string): Promise<DeviceCode | undefined> {
  const row = await db.selectFrom('oauth_device_codes').selectAll().where('user_code_hash', '=', userCodeHash).executeTakeFirst();
  return row ? toDeviceCode(row) : undefined;
}

/**
 * Records a poll at `now`, and the interval in force after it (grown on slow_down, RFC 8628 §3.5).
 * Only a row whose last poll is still `previous` is changed, so of two concurrent polls one
 * counts as the poll and the other as too fast.
 */
export async function recordPoll(db: Db, deviceCodeHash: string, previous: number | null, now: number, intervalSeconds: number): Promise<boolean> {
  const base = db.updateTable('oauth_device_codes').set({ last_polled_at: now, interval_seconds: intervalSeconds }).where('device_code_hash', '=', deviceCodeHash);
  const result = await (previous === null ? base.where('last_polled_at', 'is', null) : base.where('last_polled_at', '=', previous)).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The person's answer, for a request still pending and unexpired: false when it was answered or expired meanwhile. */
export async function answerDeviceCode(db: Db, deviceCodeHash: string, answer: { status: 'approved' | 'denied'; userId: string; grantId: string | null }, now: number): Promise<boolean> {
  const result = await db
    .updateTable('oauth_device_codes')
    .set({ status: answer.status, user_id: answer.userId, grant_id: answer.grantId })
    .where('device_code_hash', '=', deviceCodeHash)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Single use (DESIGN §3): marks an approved device code used and stores its tokens, all or none;
 * 'lost-race' when a concurrent poll took them first, 'revoked' when the grant ended meanwhile.
 */
export async function redeemDeviceCode(db: Kysely<Database>, deviceCodeHash: string, pair: TokenPair): Promise<'redeemed' | 'lost-race' | 'revoked'> {
  return db.transaction().execute(async (trx) => {
    // The person may have removed the access (Settings → Authorized apps) before the device polled.
    const grant = await trx.selectFrom('oauth_grants').select('revoked_at').where('id', '=', pair.grantId).executeTakeFirst();
    if (!grant || grant.revoked_at !== null) return 'revoked';
    const result = await trx.updateTable('oauth_device_codes').set({ status: 'used' }).where('device_code_hash', '=', deviceCodeHash).where('status', '=', 'approved').executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return 'lost-race';
    const row = { grantId: pair.grantId, applicationId: pair.applicationId, userId: pair.userId, createdAt: pair.now, resourceServerId: pair.resourceServerId };
    await insertAccessToken(trx, { ...row, tokenHash: pair.accessHash, scopes: pair.accessScopes, expiresAt: pair.accessExpiresAt });
    await insertRefreshToken(trx, { ...row, tokenHash: pair.refreshHash, scopes: pair.refreshScopes, expiresAt: pair.refreshExpiresAt, rotationKey: pair.rotationKey() });
    return 'redeemed';
  });
}
