import { sql, type Kysely } from 'kysely';

/**
 * Issue #36 §6 makes RS256 the default ID-token algorithm instead of ES256. A relying party that
 * already receives ES256 ID tokens may be set up for exactly that, so every app that has been
 * issued an ID token (an oidc_grants row) and never saved OpenID settings keeps ES256, stored
 * explicitly; its developer may switch in the portal. Apps that never had an ID token follow the
 * new default. Apps with saved settings keep them. Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    INSERT INTO oidc_clients (application_id, id_token_alg, post_logout_redirect_uris, updated_at)
    SELECT g.application_id, 'ES256', '', MAX(g.created_at)
    FROM oauth_grants g JOIN oidc_grants o ON o.grant_id = g.id
    WHERE NOT EXISTS (SELECT 1 FROM oidc_clients c WHERE c.application_id = g.application_id)
    GROUP BY g.application_id`.execute(db);
}

/** The rows cannot be told apart from settings saved later; they stay (ES256 is what those apps had). */
export async function down(): Promise<void> {}
