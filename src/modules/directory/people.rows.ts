import { toBool, toId, toIdOrNull, toNum, toNumOrNull } from '../../storage/types.js';
import type { UserRow } from './directory.table.js';
import type { Person } from './people.js';

/**
 * A `users` row as a Person. Apart from the repositories because two modules read users rows:
 * directory's people.repository.ts, and accounts' sessions.repository.ts, which joins the person
 * into the session lookup of every signed-in request (one query, not two).
 */
export function toPerson(row: UserRow): Person {
  return {
    id: toId(row.id),
    username: row.username,
    name: row.name,
    email: row.email,
    emailVerified: toBool(row.email_verified),
    avatarUrl: row.avatar_url,
    bot: toBool(row.bot),
    applicationId: toIdOrNull(row.application_id),
    createdAt: toNum(row.created_at),
    admin: toBool(row.is_admin),
    disabledAt: toNumOrNull(row.disabled_at),
    mfaEnabled: toBool(row.mfa_enabled),
  };
}
