import type { Kysely } from 'kysely';

/**
 * Indexes of oauth_codes for issue #21 §2:
 *  - by grant: revoking a grant marks its codes used (grants.repository.ts revokeGrant), which
 *    scanned the whole table;
 *  - by expiry: the purge of expired codes (codes.repository.ts purgeExpiredCodes) finds them
 *    without a scan.
 * Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('oauth_codes_grant_idx').on('oauth_codes').column('grant_id').execute();
  await db.schema.createIndex('oauth_codes_expires_idx').on('oauth_codes').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('oauth_codes_expires_idx').execute();
  await db.schema.dropIndex('oauth_codes_grant_idx').execute();
}
