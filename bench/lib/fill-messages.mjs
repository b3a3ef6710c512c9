// --messages-1m: stores many messages quickly, straight through SQLite in one transaction with one
// prepared insert (the API would take minutes at 10 requests per 2 s per webhook). The rows look
// like webhook messages of the seeded webhooks; their ids are snowflakes of the past 30 days with
// worker id 1023, so they never collide with ids the server issues afterwards.
import Database from 'better-sqlite3';

// DESIGN §1: Discord's epoch, as src/core/snowflake.ts.
const DISCORD_EPOCH = 1420070400000;

export function fillMessages(file, webhooks, count) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.defaultSafeIntegers(true);
  const insert = db.prepare(
    `insert into messages (id, channel_id, author_id, webhook_id, application_id, author_name, author_avatar_url, content, embeds, created_at, edited_at)
     values (?, ?, ?, ?, null, ?, null, ?, '[]', ?, null)`,
  );
  const start = Date.now() - 30 * 24 * 3600 * 1000;
  const step = (30 * 24 * 3600 * 1000) / count;
  let seq = 0n;
  let lastMs = -1;
  const run = db.transaction(() => {
    for (let i = 0; i < count; i += 1) {
      const at = Math.floor(start + i * step);
      const ms = at - DISCORD_EPOCH;
      seq = ms === lastMs ? seq + 1n : 0n;
      lastMs = ms;
      const id = (BigInt(ms) << 22n) | (1023n << 12n) | seq;
      const w = webhooks[i % webhooks.length];
      insert.run(id, BigInt(w.channelId), BigInt(w.id), BigInt(w.id), `hook`, `Stored message ${i}: deploy of build ${i % 9973} finished; nothing to see here, just volume.`, BigInt(at));
    }
  });
  run();
  const stored = Number(db.prepare('select count(*) as n from messages').get().n);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return stored;
}
