/**
 * What: the PostgreSQL execute path in one round trip per event-loop turn (issue #26 §1): the
 * token check and the insert are one statement (INSERT … SELECT … JOIN webhooks ON id AND
 * token_hash), and the executes of one turn share it (storage/postgres-batch.ts).
 * Invariant: a message is stored only if, when its statement ran, the webhook existed with the
 * token the request presented and, unless it is a signed GitHub delivery, had no GitHub secret
 * (issue #36 §2); so a regenerate or delete acknowledged by any instance refuses
 * every later execute on every instance. The per-instance cache below only chooses which bucket a
 * request spends before that check (docs/performance.md §PostgreSQL and Redis round trips).
 * Tested: test/http/webhook-execute-round-trips.test.ts, test/reliability/scale-out.test.ts.
 */
import { sql, type Kysely } from 'kysely';
import { matchesHash } from '../../core/secrets.js';
import type { Database } from '../../storage/database.js';
import { batched } from '../../storage/postgres-batch.js';
import { prepareQuery } from '../../storage/prepared.js';
import { findWebhook } from './webhooks.repository.js';
import type { Webhook } from './webhooks.js';

/** One execute's row, before the webhook's own fields are joined in. */
interface CheckedMessage {
  id: string;
  webhookId: string;
  /** The hash of the token the request presented: the row is stored only if it is still the webhook's. */
  tokenHash: string;
  /** A checked GitHub signature: only then may a webhook with a GitHub secret store it (issue #36 §2). */
  signed: boolean;
  /** The payload's username and avatar_url; null takes the webhook's (SPEC §2.9). */
  username: string | null;
  avatarUrl: string | null;
  content: string;
  /** JSON text, as stored. */
  embeds: string;
  createdAt: number;
}

/** What the webhook's row contributed to the stored message. */
interface StoredCheckedMessage {
  channelId: string;
  applicationId: string | null;
  authorName: string;
  authorAvatarUrl: string | null;
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
      returning id, channel_id, application_id, author_name, author_avatar_url`.compile(db),
}));

/**
 * One insert statement out at a time per instance; the executes that arrive while it commits go
 * in the next (storage/postgres-batch.ts: group commit). docs/performance.md §PostgreSQL and
 * Redis round trips.
 */
const INSERTS_IN_FLIGHT = 1;

const writers = new WeakMap<Kysely<Database>, (message: CheckedMessage) => Promise<StoredCheckedMessage | undefined>>();

function writerFor(db: Kysely<Database>): (message: CheckedMessage) => Promise<StoredCheckedMessage | undefined> {
  let writer = writers.get(db);
  if (writer === undefined) {
    writer = batched<CheckedMessage, StoredCheckedMessage>(async (items) => {
      const columns: Columns = { ids: [], webhookIds: [], tokenHashes: [], signed: [], usernames: [], avatarUrls: [], contents: [], embeds: [], createdAts: [] };
      for (const m of items) {
        columns.ids.push(m.id);
        columns.webhookIds.push(m.webhookId);
        columns.tokenHashes.push(m.tokenHash);
        columns.signed.push(m.signed);
        columns.usernames.push(m.username);
        columns.avatarUrls.push(m.avatarUrl);
        columns.contents.push(m.content);
        columns.embeds.push(m.embeds);
        columns.createdAts.push(m.createdAt);
      }
      const { rows } = await insertChecked(db, columns);
      const byId = new Map<string, StoredCheckedMessage>();
      for (const row of rows) {
        byId.set(String(row.id), { channelId: String(row.channel_id), applicationId: row.application_id === null ? null : String(row.application_id), authorName: row.author_name, authorAvatarUrl: row.author_avatar_url });
      }
      return items.map((m) => byId.get(m.id));
    }, undefined, INSERTS_IN_FLIGHT);
    writers.set(db, writer);
  }
  return writer;
}

/**
 * Stores the message if the webhook still exists with the presented token; undefined otherwise.
 * Settles once the statement carrying it committed.
 */
export function insertCheckedMessage(db: Kysely<Database>, message: CheckedMessage): Promise<StoredCheckedMessage | undefined> {
  return writerFor(db)(message);
}

/** Webhooks remembered per instance, to choose a request's bucket without a round trip. */
const MAX_REMEMBERED = 50_000;
const remembered = new WeakMap<Kysely<Database>, Map<string, Webhook>>();

function rememberedOf(db: Kysely<Database>): Map<string, Webhook> {
  let map = remembered.get(db);
  if (map === undefined) {
    map = new Map();
    remembered.set(db, map);
  }
  return map;
}

/**
 * The webhook as last seen here when the presented token matches it, else as the database has it
 * now. Only a hint: the insert above checks again. A stale hint can cost one request per instance
 * the wrong bucket (an old token spends the webhook's bucket once, then is forgotten); it never
 * stores a message or answers a record.
 */
export async function provisionalWebhook(db: Kysely<Database>, id: string, token: string): Promise<Webhook | undefined> {
  const map = rememberedOf(db);
  const known = map.get(id);
  if (known !== undefined && matchesHash(token, known.tokenHash)) return known;
  const current = await findWebhook(db, id);
  if (current === undefined) {
    map.delete(id);
    return undefined;
  }
  // Bounded by starting over: a miss costs one indexed select, and churn past 50,000 webhooks is rare.
  if (map.size >= MAX_REMEMBERED) map.clear();
  map.set(id, current);
  return current;
}

/** The insert found the webhook gone or its token changed: the hint goes. */
export function forgetWebhook(db: Kysely<Database>, id: string): void {
  remembered.get(db)?.delete(id);
}
