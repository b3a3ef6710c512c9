import type { Kysely } from 'kysely';
import type { Database } from '../../storage/database.js';
import { firstRow, prepareQuery } from '../../storage/prepared.js';
import { toBool, toId, toIdOrNull, toNum } from '../../storage/types.js';

/** An access token as introspection (RFC 7662) describes it: the token, its audience and its person, read together. */
export interface IntrospectedToken {
  applicationId: string;
  userId: string;
  username: string | null;
  scopes: string;
  createdAt: number;
  expiresAt: number;
  /** Null for Gatehouse's own API. */
  resourceServerId: string | null;
  /** The resource server's identifier and the application that serves it. */
  audience: { identifier: string; applicationId: string } | null;
  appOnly: boolean;
}

// DESIGN §5, issue #41 §1 (introspection is a hot path): one statement on the token's primary key,
// its resource server and person joined by theirs.
const introspectByHash = prepareQuery<{ hash: string }>()((db, v) =>
  db
    .selectFrom('oauth_access_tokens as t')
    .leftJoin('resource_servers as rs', 'rs.id', 't.resource_server_id')
    .leftJoin('users as u', 'u.id', 't.user_id')
    .select([
      't.application_id',
      't.user_id',
      't.scopes',
      't.created_at',
      't.expires_at',
      't.resource_server_id',
      't.app_only',
      'rs.identifier as rs_identifier',
      'rs.application_id as rs_application_id',
      'u.username as username',
    ])
    .where('t.token_hash', '=', v.hash),
);

/** The access token with this hash, for introspection; undefined when there is none. */
export async function findTokenToIntrospect(db: Kysely<Database>, tokenHash: string): Promise<IntrospectedToken | undefined> {
  const row = await firstRow(introspectByHash(db, { hash: tokenHash }));
  if (!row) return undefined;
  return {
    applicationId: toId(row.application_id),
    userId: toId(row.user_id),
    username: row.username ?? null,
    scopes: row.scopes,
    createdAt: toNum(row.created_at),
    expiresAt: toNum(row.expires_at),
    resourceServerId: toIdOrNull(row.resource_server_id ?? null),
    audience: row.rs_identifier != null && row.rs_application_id != null ? { identifier: row.rs_identifier, applicationId: toId(row.rs_application_id) } : null,
    appOnly: toBool(row.app_only ?? 0),
  };
}
