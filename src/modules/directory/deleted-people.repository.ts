import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The name a deleted account's messages are shown under (issue #38 §5), as Discord shows it. */
const DELETED_ACCOUNT_NAME = 'Deleted account';

/**
 * Empties a deleted person's row but keeps it, so their messages keep an author (issue #38 §5:
 * "their messages stay, shown as by a deleted account"): the name becomes "Deleted account", the
 * username `deleted_<id>` (the old one is free for anyone), and the e-mail, avatar and password
 * go, so nobody can sign in to it or find it by its old name.
 */
export async function anonymizePerson(db: Db, userId: string): Promise<void> {
  await db
    .updateTable('users')
    .set({ name: DELETED_ACCOUNT_NAME, username: `deleted_${userId}`, username_key: `deleted_${userId}`, email: null, email_verified: 0, avatar_url: null, password_hash: null })
    .where('id', '=', userId)
    .where('bot', '=', 0)
    .execute();
}
