import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectDatabase, type DatabaseHandle } from '../../src/storage/connect.js';
import { WAL_SIZE_LIMIT_BYTES } from '../../src/storage/sqlite/connect.js';

/**
 * WAL checkpoints from a worker thread (src/storage/sqlite/wal-checkpoint.ts, docs/performance.md): the
 * server's SQLite connection no longer copies the WAL into the database inside its COMMITs; a
 * second connection on a worker thread does, without blocking the writer. Pure SQLite, so these
 * run whatever TEST_DATABASE_URL says.
 */
let dir: string;
const handles: DatabaseHandle[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gh-checkpoint-'));
});

afterEach(async () => {
  for (const handle of handles.splice(0)) await handle.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(name: string, backgroundCheckpoints: false | { intervalMs?: number }): DatabaseHandle {
  const handle = connectDatabase(join(dir, name), backgroundCheckpoints ? { backgroundCheckpoints } : {});
  handles.push(handle);
  return handle;
}

/** Commits `count` groups of 10 rows of ~1 KB, one group per event-loop turn. */
async function write(handle: DatabaseHandle, count: number): Promise<void> {
  const filler = 'x'.repeat(1000);
  for (let i = 0; i < count; i++) {
    await Promise.all(Array.from({ length: 10 }, () => sql`insert into notes (body) values (${filler})`.execute(handle.db)));
  }
}

/** A database with the `notes` table, its checkpoint worker ready. */
async function openNotes(name: string, backgroundCheckpoints: { intervalMs?: number }): Promise<DatabaseHandle> {
  const handle = open(name, backgroundCheckpoints);
  await sql`create table notes (id integer primary key, body text not null)`.execute(handle.db);
  await handle.checkpointer?.ready;
  return handle;
}

/** `rows` rows of `bytes` characters in one transaction: the WAL holds them all until it commits. */
async function oneTransaction(handle: DatabaseHandle, rows: number, bytes: number): Promise<void> {
  const filler = 'x'.repeat(bytes);
  await handle.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows; i++) await sql`insert into notes (body) values (${filler})`.execute(trx);
  });
}

/**
 * How many times the WAL was started over: the checkpoint sequence number in its header (bytes
 * 12–15, big-endian; https://www.sqlite.org/fileformat.html#the_write_ahead_log), which a writer
 * increments each time it restarts the log from its first frame.
 */
function walRestarts(path: string): number {
  const header = Buffer.alloc(32);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, header, 0, 32, 0);
  } finally {
    closeSync(fd);
  }
  return header.readUInt32BE(12);
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('background WAL checkpoints (SQLite files)', () => {
  it('copy committed pages into the database file while the WAL is far below SQLite’s own 1,000-page checkpoint', async () => {
    const withWorker = open('worker.db', {});
    const without = open('plain.db', false);
    for (const handle of [withWorker, without]) {
      await sql`create table notes (id integer primary key, body text not null)`.execute(handle.db);
    }
    await withWorker.checkpointer?.ready;
    const before = { worker: statSync(join(dir, 'worker.db')).size, plain: statSync(join(dir, 'plain.db')).size };
    // ~400 KB: about 100 pages, a tenth of the automatic checkpoint's threshold.
    await write(withWorker, 40);
    await write(without, 40);
    await until(async () => statSync(join(dir, 'worker.db')).size > before.worker + 100_000);
    // Without the worker the rows are only in the WAL: the database file has not grown.
    expect(statSync(join(dir, 'plain.db')).size).toBe(before.plain);
    const stats = await withWorker.checkpointer?.stats();
    expect(stats?.passes).toBeGreaterThan(0);
    expect(stats?.copied).toBeGreaterThan(0);
    const { rows } = await sql<{ n: bigint }>`select count(*) as n from notes`.execute(withWorker.db);
    expect(Number(rows[0]?.n)).toBe(400);
  });

  it('sleep while nothing is committed, and wake to copy the next commit', async () => {
    const handle = await openNotes('idle.db', { intervalMs: 5 });
    const checkpointer = handle.checkpointer;
    await write(handle, 3);
    await until(async () => (await checkpointer?.stats())?.asleep === true);
    const asleep = await checkpointer?.stats();
    expect(asleep?.naps).toBeGreaterThan(0);
    // Twenty intervals without a commit: not one pass.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await checkpointer?.stats())?.passes).toBe(asleep?.passes);
    const size = statSync(join(dir, 'idle.db')).size;
    // ~400 KB committed: the worker wakes and copies it into the database file.
    await write(handle, 40);
    await until(async () => statSync(join(dir, 'idle.db')).size > size + 100_000);
    expect((await checkpointer?.stats())?.passes).toBeGreaterThan(asleep?.passes ?? 0);
  });

  it('leave the writer its own checkpoint: continuous writes still start the WAL over', async () => {
    // The worker's interval is longer than the test, so only the main connection's automatic
    // checkpoint at 1,000 pages can bound the WAL; without it (wal_autocheckpoint=0) the file
    // reaches all ~12 MB written here.
    const handle = await openNotes('steady.db', { intervalMs: 60_000 });
    // ~12 MB of rows in 1,200 commits, with no pause between them.
    await write(handle, 1200);
    expect(walRestarts(join(dir, 'steady.db-wal'))).toBeGreaterThanOrEqual(2);
    expect(statSync(join(dir, 'steady.db-wal')).size).toBeLessThan(8 * 1024 * 1024);
  });

  it('stand back once the WAL reaches the writer’s checkpoint threshold, so that the writer can start it over', async () => {
    const handle = await openNotes('threshold.db', { intervalMs: 5 });
    // ~4.4 MB at once: more than 1,000 pages in the WAL before the worker can copy any.
    await oneTransaction(handle, 4400, 1000);
    await until(async () => ((await handle.checkpointer?.stats())?.standBacks ?? 0) > 0);
    const stood = await handle.checkpointer?.stats();
    // It rests a few ticks, then checkpoints again.
    await until(async () => ((await handle.checkpointer?.stats())?.passes ?? 0) > (stood?.passes ?? 0));
    // Everything was copied: the next writer starts the WAL over.
    const restarts = walRestarts(join(dir, 'threshold.db-wal'));
    await write(handle, 1);
    expect(walRestarts(join(dir, 'threshold.db-wal'))).toBe(restarts + 1);
  });

  it('cut a WAL file that a burst grew back to 16 MB once the WAL starts over', async () => {
    const handle = await openNotes('burst.db', { intervalMs: 60_000 });
    // ~24 MB in one transaction: the WAL file grows to hold all of it.
    await oneTransaction(handle, 6000, 4000);
    const wal = join(dir, 'burst.db-wal');
    expect(statSync(wal).size).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);
    // The writer's own checkpoint copied it back at that COMMIT; the next commit restarts the WAL.
    const restarts = walRestarts(wal);
    await write(handle, 1);
    expect(walRestarts(wal)).toBe(restarts + 1);
    expect(statSync(wal).size).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
  });

  it('stop with the database handle and are never started for in-memory databases or the CLI', async () => {
    const memory = connectDatabase(':memory:', { backgroundCheckpoints: {} });
    expect(memory.checkpointer).toBeUndefined();
    await memory.close();
    const cli = open('cli.db', false);
    expect(cli.checkpointer).toBeUndefined();
    const server = connectDatabase(join(dir, 'server.db'), { backgroundCheckpoints: {} });
    await server.checkpointer?.ready;
    await server.close();
    // A stopped worker answers no more; stats() then reports nothing instead of hanging.
    expect(await server.checkpointer?.stats()).toEqual({ passes: 0, copied: 0, standBacks: 0, naps: 0, asleep: false });
  });

  it('let a process with nothing else to do finish closing the database (the thread is referenced while it stops)', () => {
    // A server after SIGTERM, its sockets closed: once close() starts, only the stopping worker
    // is left in the event loop. Were it still unreferenced, Node would exit mid-close with status 0.
    const script = join(dir, 'close.mts');
    const connect = fileURLToPath(new URL('../../src/storage/connect.ts', import.meta.url));
    writeFileSync(
      script,
      `import { connectDatabase } from ${JSON.stringify(connect)};
const handle = connectDatabase(${JSON.stringify(join(dir, 'child.db'))}, { backgroundCheckpoints: {} });
await handle.db.schema.createTable('notes').addColumn('id', 'integer', (column) => column.primaryKey()).execute();
await handle.checkpointer?.ready;
await handle.close();
process.stdout.write('closed');
process.exitCode = 3;
`,
    );
    const result = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: fileURLToPath(new URL('../..', import.meta.url)), encoding: 'utf8', timeout: 20_000 });
    expect(result.stdout).toBe('closed');
    expect(result.status).toBe(3);
    // The last connection to close checkpointed and removed the WAL.
    expect(existsSync(join(dir, 'child.db-wal'))).toBe(false);
  });

  it('run with strict durability too: the connection syncs every commit (synchronous=FULL) and the worker still checkpoints the WAL', async () => {
    const handle = connectDatabase(join(dir, 'strict.db'), { durability: 'strict', backgroundCheckpoints: {} });
    handles.push(handle);
    // SQLite's synchronous levels: 1 NORMAL (the default durability), 2 FULL.
    const { rows } = await sql<{ synchronous: number | bigint }>`pragma synchronous`.execute(handle.db);
    expect(rows.map((r) => Number(r.synchronous))).toEqual([2]);
    await sql`create table notes (id integer primary key, body text not null)`.execute(handle.db);
    await handle.checkpointer?.ready;
    const before = statSync(join(dir, 'strict.db')).size;
    await write(handle, 40);
    await until(() => statSync(join(dir, 'strict.db')).size > before + 100_000);
  });
});
