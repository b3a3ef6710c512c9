import { createHash } from 'node:crypto';
import { open, seal, sealingKey } from '../../core/sealed.js';
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
  return sealingKey(deps.secrets[0], `one-time-reveal:${sessionToken}`);
}

function rowId(sessionToken: string, purpose: string): string {
  return sha256(`${sessionToken}\n${purpose}`);
}

/** Holds `value` for the next `takeOnce` of this session and purpose (replacing one not yet read). */
export async function holdOnce(deps: Pick<Deps, 'db' | 'clock' | 'random' | 'secrets'>, sessionToken: string, purpose: string, value: unknown): Promise<void> {
  const sealed = seal(keyOf(deps, sessionToken), deps.random.bytes(12), JSON.stringify(value));
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
  // Sealed under a server secret since rotated away: as good as expired.
  const plain = open(keyOf(deps, sessionToken), row.sealed);
  return plain === undefined ? undefined : (JSON.parse(plain) as T);
}
