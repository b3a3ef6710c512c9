/**
 * What: the message of a webhook execute, stored by the owner of messages. On PostgreSQL in one
 * round trip per event-loop turn (issue #26 §1): the token check and the insert are one statement
 * (INSERT … SELECT … JOIN webhooks ON id AND token_hash), and the executes of one turn share it
 * (storage/postgres-batch.ts); on SQLite a plain insert, because the gate's lookup in the same
 * turn is exact (storage/sqlite/row-cache.ts) and the write groups serialize every writer.
 * Invariant: on PostgreSQL a message is stored only if, when its statement ran, the webhook
 * existed with the token the request presented and, unless it is a signed GitHub delivery, had no
 * GitHub secret (issue #36 §2); so a regenerate or delete acknowledged by any instance refuses
 * every later execute on every instance. The repository chooses the strategy, not the service
 * (issue #37 §4).
 * Tested: test/http/webhook-execute-round-trips.test.ts, test/reliability/scale-out.test.ts.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../storage/database.js';
import { onPostgres } from '../../storage/dialect-of.js';
import { batched } from '../../storage/postgres-batch.js';
import { prepareQuery } from '../../storage/prepared.js';
import { declareTables } from '../../storage/query-tables.js';
import { insertMessage, type NewMessage } from './messages.repository.js';

/** One execute's message and what its statement checks. */
interface CheckedMessage {
  /** Its channel, application and author fields become the stored row's. */
  message: NewMessage;
  /** The hash of the token the request presented: the row is stored only if it is still the webhook's. */
  tokenHash: string;
  /** A checked GitHub signature: only then may a webhook with a GitHub secret store it (issue #36 §2). */
  signed: boolean;
  /** The payload's username and avatar_url; null takes the webhook's (SPEC §2.9). */
  username: string | null;
  avatarUrl: string | null;
  /** JSON text, as stored. */
  embeds: string;
}

interface Columns {
  ids: string[];
  webhookIds: string[];
  tokenHashes: string[];
  signed: boolean[];
  usernames: (string | null)[];
  avatarUrls: (string | null)[];
  contents: string[];
  embeds: string[];
  createdAts: number[];
}

/**
 * One named statement whatever the number of rows: the rows travel as parallel arrays and
 * unnest() turns them back into rows, so PostgreSQL parses and plans it once per connection.
 */
const insertChecked = prepareQuery<Columns>()((db, v) => ({
  compile: () =>
    sql<{ id: string; channel_id: string; application_id: string | null; author_name: string; author_avatar_url: string | null }>`
      insert into messages (id, channel_id, author_id, webhook_id, application_id, author_name, author_avatar_url, content, embeds, created_at, edited_at)
      select r.id, w.channel_id, w.id, w.id, w.application_id, coalesce(r.username, w.name), coalesce(r.avatar_url, w.avatar_url), r.content, r.embeds, r.created_at, null
      from unnest(${v.ids}::bigint[], ${v.webhookIds}::bigint[], ${v.tokenHashes}::text[], ${v.signed}::boolean[], ${v.usernames}::text[], ${v.avatarUrls}::text[], ${v.contents}::text[], ${v.embeds}::text[], ${v.createdAts}::bigint[])
        as r(id, webhook_id, token_hash, signed, username, avatar_url, content, embeds, created_at)
      join webhooks w on w.id = r.webhook_id and w.token_hash = r.token_hash and (r.signed or w.github_secret_sealed is null)
      returning id, channel_id, application_id, author_name, author_avatar_url${declareTables({ inserts: ['messages'], reads: ['webhooks'] })}`.compile(db),
}));

/**
 * One insert statement out at a time per instance; the executes that arrive while it commits go
 * in the next (storage/postgres-batch.ts: group commit). docs/performance.md §PostgreSQL and
 * Redis round trips.
 */
const INSERTS_IN_FLIGHT = 1;

const writers = new WeakMap<Kysely<Database>, (message: CheckedMessage) => Promise<boolean | undefined>>();

function writerFor(db: Kysely<Database>): (message: CheckedMessage) => Promise<boolean | undefined> {
  let writer = writers.get(db);
  if (writer === undefined) {
    writer = batched<CheckedMessage, boolean>(async (items) => {
      const columns: Columns = { ids: [], webhookIds: [], tokenHashes: [], signed: [], usernames: [], avatarUrls: [], contents: [], embeds: [], createdAts: [] };
      for (const { message, tokenHash, signed, username, avatarUrl, embeds } of items) {
        columns.ids.push(message.id);
        columns.webhookIds.push(message.webhookId as string);
        columns.tokenHashes.push(tokenHash);
        columns.signed.push(signed);
        columns.usernames.push(username);
        columns.avatarUrls.push(avatarUrl);
        columns.contents.push(message.content);
        columns.embeds.push(embeds);
        columns.createdAts.push(message.createdAt);
      }
      const { rows } = await insertChecked(db, columns);
      const byId = new Map<string, (typeof rows)[number]>();
      for (const row of rows) byId.set(String(row.id), row);
      return items.map(({ message }) => {
        const row = byId.get(message.id);
        if (row === undefined) return false;
        message.channelId = String(row.channel_id);
        message.applicationId = row.application_id === null ? null : String(row.application_id);
        message.authorName = row.author_name;
        message.authorAvatarUrl = row.author_avatar_url;
        return true;
      });
    }, undefined, INSERTS_IN_FLIGHT);
    writers.set(db, writer);
  }
  return writer;
}

/**
 * Stores a webhook's message, with the hash of the token the request presented and whether its
 * GitHub signature was checked (`signed`); `username`/`avatarUrl` are the payload's (null takes the
 * webhook's, SPEC §2.9). Resolves to false when PostgreSQL found the webhook gone, its token
 * changed or a GitHub secret set on an unsigned delivery; otherwise, once the row is committed, to
 * something else, with `message`'s channel, application and author fields made the stored row's
 * (the webhook's as the statement saw it). Positional arguments and no await of its own: the
 * execute path allocates nothing it did not before (DESIGN §5).
 */
export function insertWebhookMessage(
  db: Kysely<Database>,
  message: NewMessage,
  tokenHash: string,
  signed: boolean,
  username: string | null,
  avatarUrl: string | null,
): Promise<unknown> {
  if (!onPostgres(db)) return insertMessage(db, message);
  return writerFor(db)({ message, tokenHash, signed, username, avatarUrl, embeds: JSON.stringify(message.embeds) });
}
