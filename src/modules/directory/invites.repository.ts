import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId, toNum, toNumOrNull } from '../../storage/types.js';
import type { InvitesTable } from './directory.table.js';
import type { Invite } from './invites.js';

type Db = Kysely<Database> | Transaction<Database>;

function toInvite(row: Selectable<InvitesTable>): Invite {
  return {
    id: toId(row.id),
    serverId: toId(row.server_id),
    creatorId: toId(row.creator_id),
    maxUses: toNumOrNull(row.max_uses),
    uses: toNum(row.uses),
    expiresAt: toNumOrNull(row.expires_at),
    createdAt: toNum(row.created_at),
  };
}

export async function insertInvite(db: Db, invite: Invite, codeHash: string, codeSealed: string): Promise<void> {
  await db
    .insertInto('invites')
    .values({
      id: invite.id,
      code_hash: codeHash,
      code_sealed: codeSealed,
      server_id: invite.serverId,
      creator_id: invite.creatorId,
      max_uses: invite.maxUses,
      uses: invite.uses,
      expires_at: invite.expiresAt,
      created_at: invite.createdAt,
    })
    .execute();
}

export async function findInviteByCodeHash(db: Db, codeHash: string): Promise<Invite | undefined> {
  const row = await db.selectFrom('invites').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
  return row ? toInvite(row) : undefined;
}

/** The server's invites, newest first, each with its sealed code (null when it was never kept). */
export async function listInvites(db: Db, serverId: string): Promise<Array<Invite & { codeSealed: string | null }>> {
  const rows = await db.selectFrom('invites').selectAll().where('server_id', '=', serverId).orderBy('id', 'desc').execute();
  return rows.map((row) => ({ ...toInvite(row), codeSealed: row.code_sealed }));
}

export async function deleteInvite(db: Db, serverId: string, inviteId: string): Promise<boolean> {
  const result = await db.deleteFrom('invites').where('server_id', '=', serverId).where('id', '=', inviteId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Counts one use, atomically (DESIGN §3): a single UPDATE that only matches while the invite is
 * unexpired and has uses left, so two people racing for the last use cannot both get in.
 */
export async function consumeInviteUse(db: Db, inviteId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('invites')
    .set({ uses: sql<number>`uses + 1` })
    .where('id', '=', inviteId)
    .where((eb) => eb.or([eb('max_uses', 'is', null), eb('uses', '<', eb.ref('max_uses'))]))
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
