/**
 * What: WAL checkpoints of a SQLite file run by a second connection on a worker thread, so the
 * event loop's COMMITs do not copy the WAL back into the database themselves.
 * Invariant: the worker's PASSIVE checkpoints never take the writer's lock nor wait; it stands back
 * once the WAL reaches the writer's threshold so that the writer can start the WAL over; a commit
 * is as durable as without it (the worker uses the main connection's synchronous setting).
 * Tested: test/storage/wal-checkpoint.test.ts.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints in a worker thread (DESIGN §5, docs/performance.md §Checkpoints).
 *
 * SQLite copies the WAL back into the database file ("checkpoint") inside the COMMIT that takes
 * the WAL past 1,000 pages, on the connection that committed: for Gatehouse, the event loop. With
 * webhook messages arriving at 5,000/s, every group commit writes 3 b-tree pages (the messages
 * table and its two indexes), a checkpoint came due about ten times a second and held the loop
 * for 5–10 ms each time (hundreds of page reads and writes and two fsyncs), and every request that
 * arrived meanwhile waited: that was the p97.5/p99 of a fixed 5,000 requests/s.
 *
 * Here a second connection, on its own thread, runs a PASSIVE checkpoint every few milliseconds.
 * PASSIVE never takes the writer's lock and never waits: the event loop's writes go on while the
 * pages are copied and fsynced. The main connection keeps its own automatic checkpoint (SQLite's
 * default, at 1,000 pages), because only a checkpoint that finishes with no commit in between lets
 * the next writer start the WAL file over; by the time it comes due, the worker has copied nearly
 * every page, so it costs little, and the WAL stays bounded.
 *
 * That last step needs the writer's checkpoint to get SQLite's checkpoint lock, which a running
 * PASSIVE checkpoint holds, fsyncs included, and SQLite never waits for that lock. So once the WAL
 * reaches the writer's threshold, the worker stands back for a few ticks: the writer's next COMMIT
 * checkpoints the little the worker has not copied, and the one after starts the WAL over. What
 * remains is one pass's worth: commits that arrive while a worker pass is still fsyncing cannot
 * restart the WAL, so on a disk whose fsyncs take 100 ms, under back-to-back commits, the WAL grew
 * to ~3,000 pages (12 MB) before the pass ended (docs/performance.md §Checkpoints). Those pages are
 * still copied and the file is reused from its start afterwards; only the writer's own blocking
 * checkpoint, which this worker exists to avoid, would bound it tighter.
 *
 * An idle database is not polled: once IDLE_PASSES passes in a row found every WAL frame copied,
 * the worker stops its timer and sleeps until the main connection's next write group commits
 * (connect.ts hands each commit to `noteCommit`, which wakes it with one message). A server with
 * nothing to do then keeps no thread waking fifty times a second. Before it sleeps the worker
 * raises a flag the main thread reads at each commit, then checkpoints once more, so a commit made
 * just before the flag went up is copied by that last pass, and one made after it wakes the worker.
 *
 * Durability is unchanged: a commit is durable once it is in the WAL (and, with
 * GATEHOUSE_DURABILITY=strict, fsynced there) whether or not it has been checkpointed; the worker
 * uses the main connection's `synchronous` setting, so its checkpoints fsync as SQLite's would.
 */

/** How often the worker checkpoints while the database is written; an idle PASSIVE checkpoint only reads the WAL index header. */
export const CHECKPOINT_INTERVAL_MS = 20;

/** SQLite's default `wal_autocheckpoint`, which the main connection keeps: the writer checkpoints at every COMMIT past it. */
export const WRITER_CHECKPOINT_FRAMES = 1000;

/** Ticks the worker skips once the WAL has reached WRITER_CHECKPOINT_FRAMES (100 ms at the default interval). */
export const STAND_BACK_TICKS = 5;

/** Passes in a row with nothing left to copy before the worker sleeps until the next commit (100 ms at the default interval). */
export const IDLE_PASSES = 5;

/**
 * The worker's code, run with `eval` so that the same file works from the compiled build and from
 * the TypeScript sources under test (Node 20 cannot load a .ts worker entry). It reports each
 * checkpoint's counts and any error; it never throws: a failed checkpoint is retried next tick and
 * SQLite's own automatic checkpoint still runs on the main connection.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.modulePath);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('synchronous = ' + workerData.synchronous);
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
// 1 while the worker sleeps: the main thread's next commit clears it and sends 'wake'.
const asleep = new Int32Array(workerData.asleep);
let passes = 0;
let copied = 0;
let standBacks = 0;
let naps = 0;
let resting = 0;
let quiet = 0;
let timer;
// One PASSIVE checkpoint; true when every frame of the WAL is in the database file.
const pass = () => {
  const row = checkpoint.get();
  passes += 1;
  if (row.checkpointed > 0) copied += row.checkpointed;
  // The writer's own checkpoint is due: leave it the checkpoint lock (see above).
  if (row.log >= workerData.standBackFrames) {
    standBacks += 1;
    resting = workerData.standBackTicks;
  }
  return row.log === row.checkpointed;
};
const sleep = () => {
  Atomics.store(asleep, 0, 1);
  // A commit announced before the flag went up found the worker awake and sent nothing: copy it now.
  if (!pass() && Atomics.compareExchange(asleep, 0, 1, 0) === 1) return;
  clearInterval(timer);
  timer = undefined;
  naps += 1;
};
const tick = () => {
  if (resting > 0) {
    resting -= 1;
    return;
  }
  try {
    quiet = pass() ? quiet + 1 : 0;
    if (quiet >= workerData.idlePasses) {
      quiet = 0;
      sleep();
    }
  } catch (error) {
    parentPort.postMessage({ type: 'error', message: String(error && error.message) });
  }
};
timer = setInterval(tick, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'wake' && timer === undefined) timer = setInterval(tick, workerData.intervalMs);
  if (message === 'stats') parentPort.postMessage({ type: 'stats', passes, copied, standBacks, naps });
  if (message === 'stop') {
    clearInterval(timer);
    db.close();
    parentPort.postMessage({ type: 'stopped' });
    parentPort.close();
  }
});
parentPort.postMessage({ type: 'ready' });
`;

export interface CheckpointStats {
  /** Checkpoint attempts so far. */
  passes: number;
  /** WAL frames those attempts reported as checkpointed (a frame may be counted again by later passes until the WAL restarts). */
  copied: number;
  /** Times the worker found the WAL at the writer's checkpoint threshold and stood back. */
  standBacks: number;
  /** Times the worker found nothing left to copy and slept until the next commit. */
  naps: number;
  /** Whether it sleeps now. */
  asleep: boolean;
}

export interface Checkpointer {
  /** Resolves once the worker's connection is open. */
  readonly ready: Promise<void>;
  stats(): Promise<CheckpointStats>;
  /** The main connection committed a write group: wakes the worker if it sleeps (a load of a shared flag otherwise). */
  noteCommit(): void;
  /** Stops the timer and closes the worker's connection. */
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  synchronous: 'NORMAL' | 'FULL';
  intervalMs?: number;
  /** Called with the message of a checkpoint that failed (logged by the caller; the next tick retries). */
  onError?: (message: string) => void;
}

/** Starts checkpointing the SQLite database at `path` (a file in WAL mode) from a worker thread. */
export function startCheckpointer(path: string, options: CheckpointerOptions): Checkpointer {
  const modulePath = createRequire(import.meta.url).resolve('better-sqlite3');
  const asleep = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      modulePath,
      path,
      synchronous: options.synchronous,
      intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS,
      standBackFrames: WRITER_CHECKPOINT_FRAMES,
      standBackTicks: STAND_BACK_TICKS,
      idlePasses: IDLE_PASSES,
      asleep: asleep.buffer,
    },
    // A timer and one prepared statement: a small heap is plenty, and RSS counts (issue #6).
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
    stdout: false,
    stderr: false,
  });
  // The worker must never keep the process alive: a server that is shutting down stops it, and a
  // process that exits without stopping it loses nothing (checkpoints are redone by SQLite).
  worker.unref();
  const waiting = new Map<string, Array<(value: unknown) => void>>();
  const expect = (type: string): Promise<unknown> =>
    new Promise((resolve) => {
      const list = waiting.get(type) ?? [];
      list.push(resolve);
      waiting.set(type, list);
    });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let failure: Error | undefined;
  worker.on('error', (error) => {
    failure = error;
    options.onError?.(error.message);
  });
  worker.on('message', (message: { type: string; message?: string }) => {
    if (message.type === 'error') {
      options.onError?.(message.message ?? 'checkpoint failed');
      return;
    }
    const list = waiting.get(message.type);
    waiting.delete(message.type);
    for (const resolve of list ?? []) resolve(message);
  });
  const ready = Promise.race([expect('ready'), exited.then(() => Promise.reject(failure ?? new Error('checkpoint worker exited before it was ready')))]).then(() => undefined);
  // Callers that never await `ready` must not see an unhandled rejection; those that do still get it.
  ready.catch(() => undefined);
  let stopping: Promise<void> | undefined;
  return {
    ready,
    async stats() {
      const reply = expect('stats');
      worker.postMessage('stats');
      const { passes, copied, standBacks, naps } = (await Promise.race([reply, exited.then(() => ({ passes: 0, copied: 0, standBacks: 0, naps: 0 }))])) as CheckpointStats;
      return { passes, copied, standBacks, naps, asleep: Atomics.load(asleep, 0) === 1 };
    },
    noteCommit() {
      if (Atomics.load(asleep, 0) === 1 && Atomics.compareExchange(asleep, 0, 1, 0) === 1) worker.postMessage('wake');
    },
    stop() {
      stopping ??= (async () => {
        // Referenced again while it stops: otherwise a process with nothing else left to do (a
        // server after SIGTERM, its sockets closed) would exit in the middle of this await, with
        // status 0 and before the main connection's last checkpoint.
        worker.ref();
        worker.postMessage('stop');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]);
        clearTimeout(timer);
        await worker.terminate();
      })();
      return stopping;
    },
  };
}
