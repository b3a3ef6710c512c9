/**
 * What: the database blob store (GATEHOUSE_FILE_STORE=postgres, the default on PostgreSQL): every
 * instance reads what any instance wrote. A file is cut into CHUNK_BYTES rows as it streams in and
 * read back a few chunks at a time, so neither direction holds more than a few chunks in memory
 * (issue #42 §1: never one giant bytea).
 * Invariant: a put that fails deletes the chunks it wrote.
 * Tested: test/http/attachments.test.ts.
 */
import type { Kysely } from 'kysely';
import { Readable } from 'node:stream';
import type { BlobStore, ByteRange } from './blob-store.js';
import type { Database } from './database.js';

async function insertChunk(db: Kysely<Database>, key: string, seq: number, data: Buffer): Promise<void> {
  await db.insertInto('file_chunks').values({ storage_key: key, seq, data }).execute();
}

/** The chunks numbered from `fromSeq` to `toSeq` (inclusive), at most `limit` of them, in order: one statement, a few chunks. */
async function readChunks(db: Kysely<Database>, key: string, fromSeq: number, toSeq: number, limit: number): Promise<{ seq: number; data: Buffer }[]> {
  const rows = await db
    .selectFrom('file_chunks')
    .select(['seq', 'data'])
    .where('storage_key', '=', key)
    .where('seq', '>=', fromSeq)
    .where('seq', '<=', toSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), data: Buffer.isBuffer(r.data) ? r.data : Buffer.from(r.data as Uint8Array) }));
}

async function deleteChunks(db: Kysely<Database>, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await db.deleteFrom('file_chunks').where('storage_key', 'in', keys).execute();
}

/** 256 KiB: large enough that a 25 MiB file is 100 rows, small enough to hold a few in memory. */
export const CHUNK_BYTES = 256 * 1024;
/** Chunks fetched per statement while reading. */
const READ_AHEAD = 4;

export class DatabaseBlobStore implements BlobStore {
  readonly kind = 'postgres';

  constructor(private readonly db: Kysely<Database>) {}

  async put(key: string, source: Readable | AsyncIterable<Buffer>): Promise<void> {
    let seq = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        while (pendingBytes >= CHUNK_BYTES) {
          const all = Buffer.concat(pending, pendingBytes);
          await insertChunk(this.db, key, seq++, all.subarray(0, CHUNK_BYTES));
          const rest = all.subarray(CHUNK_BYTES);
          pending = rest.length > 0 ? [Buffer.from(rest)] : [];
          pendingBytes = rest.length;
        }
      }
      if (pendingBytes > 0 || seq === 0) await insertChunk(this.db, key, seq, Buffer.concat(pending, pendingBytes));
    } catch (error) {
      await deleteChunks(this.db, [key]);
      throw error;
    }
  }

  async read(key: string, range: ByteRange): Promise<Readable | undefined> {
    const firstSeq = Math.floor(range.start / CHUNK_BYTES);
    const lastSeq = Math.floor(range.end / CHUNK_BYTES);
    const first = await readChunks(this.db, key, firstSeq, lastSeq, READ_AHEAD);
    if (first.length === 0) return undefined;
    const db = this.db;
    async function* chunks(): AsyncGenerator<Buffer> {
      let batch = first;
      for (;;) {
        for (const { seq, data } of batch) {
          const from = seq === firstSeq ? range.start - seq * CHUNK_BYTES : 0;
          const to = seq === lastSeq ? range.end - seq * CHUNK_BYTES + 1 : data.length;
          yield data.subarray(from, to);
          if (seq === lastSeq) return;
        }
        const next = (batch.at(-1)?.seq ?? lastSeq) + 1;
        batch = await readChunks(db, key, next, lastSeq, READ_AHEAD);
        // A file deleted while it was being read ends early rather than hanging.
        if (batch.length === 0) throw new Error('file deleted while it was read');
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  async delete(keys: readonly string[]): Promise<void> {
    await deleteChunks(this.db, keys);
  }
}
