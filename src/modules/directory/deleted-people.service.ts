import type { Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { anonymizePerson } from './deleted-people.repository.js';

/**
 * Issue #38 §5: the person's row emptied to "Deleted account" inside the account deletion's own
 * transaction (accounts/account-deletion.service.ts), with its sessions' end and its audit row.
 */
export async function anonymizePersonIn(trx: Transaction<Database>, userId: string): Promise<void> {
  await anonymizePerson(trx, userId);
}
