import type { Kysely } from 'kysely';

/**
 * Issue #40 §2: where and by whom an app's command may be used, as Discord's command fields say.
 * `default_member_permissions`: the permission bits (decimal text) a member needs to use it in a
 * server; null: anyone who may use application commands. `integration_types` and `contexts`:
 * Discord's lists as bit sets (bit n set = value n listed: install types 0 server, 1 user;
 * contexts 0 server channel, 1 DM with the bot, 2 group DM), so one indexed statement can test
 * them; null: the field was not sent, every value.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('application_commands').addColumn('default_member_permissions', 'text').execute();
  await db.schema.alterTable('application_commands').addColumn('integration_types', 'integer').execute();
  await db.schema.alterTable('application_commands').addColumn('contexts', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('application_commands').dropColumn('contexts').execute();
  await db.schema.alterTable('application_commands').dropColumn('integration_types').execute();
  await db.schema.alterTable('application_commands').dropColumn('default_member_permissions').execute();
}
