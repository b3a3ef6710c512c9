import { createCipheriv, createDecipheriv, createHash, createHmac } from 'node:crypto';
import type { Deps } from '../../deps.js';
import { toNum } from '../../storage/types.js';

/**
 * One-time reveals (issue #24, "Managing"): a create form answers 303 to a GET page, so reloading
 * it creates nothing; the secret it made (webhook URL, client secret, bot token, invite link) must
 * reach that page once, and only the same person's session may read it.
 *
 * Decision: a row per (session, purpose), deleted by the one read that shows it and dead after
 * REVEAL_TTL_MS anyway. The row keeps SHA-256 of the session cookie, never the cookie, and the value
 * sealed with AES-256-GCM under HMAC(server secret, session cookie): a database dump alone opens
 * nothing, and the plain value exists only in the one response that shows it (no-store, not logged).
 * Never in the URL. Works across instances since it lives in the shared database.
 */
export const REVEAL_TTL_MS = 5 * 60_000;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function keyOf(deps: Pick<Deps, 'secrets'>, sessionToken: string): Buffer {
  return createHmac('sha256', deps.secrets[0]).update(`one-time-reveal:${sessionToken}`).digest();
}

function rowId(sessionToken: string, purpose: string): string {
  return sha256(`${sessionToken}\n${purpose}`);
}

/** Holds `value` for the next `takeOnce` of this session and purpose (replacing one not yet read). */
export async function holdOnce(deps: Pick<Deps, 'db' | 'clock' | 'random' | 'secrets'>, sessionToken: string, purpose: string, value: unknown): Promise<void> {
  const iv = deps.random.bytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(deps, sessionToken), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  const sealed = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  const id = rowId(sessionToken, purpose);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('one_time_reveals').where((eb) => eb.or([eb('id', '=', id), eb('expires_at', '<', now)])).execute();
    await trx.insertInto('one_time_reveals').values({ id, session_hash: sha256(sessionToken), sealed, expires_at: now + REVEAL_TTL_MS }).execute();
  });
}

/**
 * The value held for this session and purpose, deleting it: the first read gets it, any later one
 * (a reload, a second tab, another session) gets undefined.
 */
export async function takeOnce<T>(deps: Pick<Deps, 'db' | 'clock' | 'secrets'>, sessionToken: string | undefined, purpose: string): Promise<T | undefined> {
  if (!sessionToken) return undefined;
  const id = rowId(sessionToken, purpose);
  const row = await deps.db.selectFrom('one_time_reveals').select(['sealed', 'expires_at']).where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  // Only the read whose delete removed the row shows it (two reads at once: one wins).
  const removed = await deps.db.deleteFrom('one_time_reveals').where('id', '=', id).executeTakeFirst();
  if (Number(removed.numDeletedRows) !== 1 || toNum(row.expires_at) < deps.clock.now()) return undefined;
  try {
    const raw = Buffer.from(row.sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(deps, sessionToken), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')) as T;
  } catch {
    // Sealed under a server secret since rotated away: as good as expired.
    return undefined;
  }
}
