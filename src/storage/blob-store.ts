/**
 * What: where files' bytes live (issue #42 §1), behind one interface with two backends chosen by
 * GATEHOUSE_FILE_STORE: the filesystem (fs-blob-store.ts, one process or a shared volume) and the
 * database (database-blob-store.ts, chunked rows every instance shares).
 * Invariant: files are id-addressed: a key is written once, by one upload, and never rewritten;
 * a put that fails leaves nothing under its key; reading and writing stream (no file is ever held
 * in memory whole). Metadata (name, size, type) lives in `attachments`, not here.
 * Tested: test/http/attachments.test.ts (both backends on PostgreSQL, the filesystem on SQLite).
 */
import type { Readable } from 'node:stream';

/** Inclusive byte range, as HTTP ranges are (RFC 9110 §14.1.2). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BlobStore {
  readonly kind: 'fs' | 'postgres';
  /**
   * Writes every chunk of `source` under `key`. When `source` throws (an upload over the limit,
   * truncated or aborted), nothing stays under `key` and the error is rethrown. A Readable is
   * consumed as a stream (the filesystem store pipes it straight to the file).
   */
  put(key: string, source: Readable | AsyncIterable<Buffer>): Promise<void>;
  /** The bytes of `range` (which must lie within the file), streamed; undefined when `key` holds nothing. */
  read(key: string, range: ByteRange): Promise<Readable | undefined>;
  /** Removes what is stored under each key; a missing key is not an error. */
  delete(keys: readonly string[]): Promise<void>;
}
