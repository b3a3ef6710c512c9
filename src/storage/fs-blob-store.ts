/**
 * What: the filesystem blob store (GATEHOUSE_FILE_STORE=fs, the default on SQLite): each file at
 * `<dir>/<last two digits of its key>/<key>`, written to `<key>.part` and renamed once complete, so
 * a reader never sees half a file and an interrupted upload leaves only a `.part` that delete()
 * removes.
 * Invariant: keys are snowflake ids (digits only) or uploaded images' `{kind}-{id}-{hash}`
 * (resources/uploaded-images.ts): letters, digits and `-`, so a key can never name a path outside `dir`.
 * Tested: test/http/attachments.test.ts.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, ByteRange } from './blob-store.js';

/**
 * Bytes the write stream buffers before it asks its source to wait (Node's default is 16 KiB,
 * less than one 64 KiB socket read, so every chunk was one fs.write of its own).
 */
const WRITE_BUFFER_BYTES = 1024 * 1024;

const KEY = /^(?:[0-9]{1,20}|(?:avatars|icons|app-icons)-[0-9]{1,20}-[0-9a-f]{32})$/;

export class FsBlobStore implements BlobStore {
  readonly kind = 'fs';

  constructor(private readonly dir: string) {}

  private pathOf(key: string): { folder: string; file: string } {
    // No `.`, no separator, nothing outside `dir` (the keys are our own ids and hashes).
    if (!KEY.test(key)) throw new Error(`not a blob key: ${key.slice(0, 24)}`);
    // 100 folders, so no directory grows to millions of entries.
    const folder = join(this.dir, key.slice(-2).padStart(2, '0'));
    return { folder, file: join(folder, key) };
  }

  async put(key: string, source: Readable | AsyncIterable<Buffer>): Promise<void> {
    const { folder, file } = this.pathOf(key);
    await mkdir(folder, { recursive: true });
    const part = `${file}.part`;
    try {
      // pipeline() keeps to the disk's pace: a fast upload waits for the write stream to drain.
      // A stream is piped as it is (an upload's file part: no Readable.from in between), and the
      // write stream holds up to WRITE_BUFFER_BYTES, so the chunks that arrive while one write is
      // in flight go to the disk together in one writev (docs/performance.md §Files).
      const from = source instanceof Readable ? source : Readable.from(source, { objectMode: false });
      await pipeline(from, createWriteStream(part, { flags: 'wx', mode: 0o600, highWaterMark: WRITE_BUFFER_BYTES }));
      await rename(part, file);
    } catch (error) {
      await rm(part, { force: true });
      throw error;
    }
  }

  async read(key: string, range: ByteRange): Promise<Readable | undefined> {
    const { file } = this.pathOf(key);
    try {
      await stat(file);
    } catch {
      return undefined;
    }
    return createReadStream(file, { start: range.start, end: range.end });
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      const { file } = this.pathOf(key);
      await rm(file, { force: true });
      await rm(`${file}.part`, { force: true });
    }
  }
}
