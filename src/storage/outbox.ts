import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from './database.js';
import { onPostgres } from './dialect-of.js';

/**
 * What: the parts every outbox shares (the mail outbox, issue #38 §1; the app-event outbox, issue
 * #40 §1): claiming due rows under a lease so that several instances each send a row once, and
 * the per-instance worker that runs claim-and-send rounds, one at a time.
 * Invariant: a row is sent by the holder of its lease; a claimed row is away from every other
 * claimer until its lease expires (a crashed instance's rows are taken over then). On PostgreSQL
 * the claim's inner SELECT skips rows another claim is locking right now (FOR UPDATE SKIP LOCKED);
 * SQLite has one writer, so the statement alone is atomic.
 * Tested: test/http/mail-instances.test.ts, test/http/app-events-instances.test.ts (two instances
 * on PostgreSQL deliver each row once).
 */

/** Tables with the outbox columns: status ('queued' when due), attempts, next_attempt_at, lease_holder, lease_until. */
export type OutboxTable = 'mail_outbox' | 'app_event_outbox';

/**
 * Claims up to `limit` queued rows of `table` due at `now` for `holder` until `leaseUntil`,
 * counting the attempt, in one statement; the claimed rows in id order.
 */
export async function claimDueRows<T extends OutboxTable>(db: Kysely<Database>, table: T, holder: string, now: number, leaseUntil: number, limit: number): Promise<Array<Selectable<Database[T]>>> {
  // Both tables have the lease columns; Kysely types a statement against one table name at a time.
  const name = table as 'mail_outbox';
  // A read first: an idle queue (the usual case) costs each poll no write, so the poll neither
  // takes SQLite's write lock nor ends the row cache's generation.
  const due = await db.selectFrom(name).select('id').where('status', '=', 'queued').where('next_attempt_at', '<=', now).where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', now)])).limit(1).executeTakeFirst();
  if (due === undefined) return [];
  const postgres = onPostgres(db);
  const rows = await db
    .updateTable(name)
    .set({ lease_holder: holder, lease_until: leaseUntil, attempts: sql<number>`attempts + 1` })
    .where('id', 'in', (eb) => {
      const due = eb
        .selectFrom(name)
        .select('id')
        .where('status', '=', 'queued')
        .where('next_attempt_at', '<=', now)
        .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', now)]))
        .orderBy('next_attempt_at')
        .orderBy('id')
        .limit(limit);
      return postgres ? due.forUpdate().skipLocked() : due;
    })
    .returningAll()
    .execute();
  return (rows as unknown as Array<Selectable<Database[T]> & { id: string | bigint }>).sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
}

/**
 * When the next row of `table` becomes claimable, as far as this database knows now: the earliest
 * due time of a queued row, or for a leased one the later of its due time and its lease's end (a
 * lease held elsewhere keeps the row away until then). Undefined for an empty queue.
 */
export async function nextDueAt(db: Kysely<Database>, table: OutboxTable): Promise<number | undefined> {
  const name = table as 'mail_outbox';
  const row = await db
    .selectFrom(name)
    .select(sql<number | string | null>`min(case when lease_until is not null and lease_until > next_attempt_at then lease_until else next_attempt_at end)`.as('due'))
    .where('status', '=', 'queued')
    .executeTakeFirst();
  return row?.due === null || row?.due === undefined ? undefined : Number(row.due);
}

export interface OutboxWorker<R> {
  /** Runs a round now (or after the running one); resolves with its report. */
  runNow(): Promise<R>;
  /** Asks for a round soon: now when idle, else one more after the running one (many pokes, one round). */
  poke(): void;
  stop(): Promise<void>;
}

/** How the worker learns when to run next without being poked (a retry's due time). */
export interface OutboxSchedule {
  /** The clock the rows' due times are on. */
  now(): number;
  /** The next due time (nextDueAt), asked after each round. */
  nextDueAt(): Promise<number | undefined>;
}

/**
 * A row due already but not taken by the round that just ended (another instance's insert or
 * lease, clocks a little apart): looked at again after this long rather than at once, so such a
 * row never makes a busy loop.
 */
const ALREADY_DUE_RECHECK_MS = 1_000;

/**
 * Runs `round` on an unref'd timer (it never keeps the process alive), never two rounds at once; a
 * round that throws is logged and the next one retries. Without `schedule` a round runs every
 * `intervalMs`. With it, the worker sleeps after each round until the next row is due (so a
 * retry is sent at its time, not at the next poll), and `intervalMs` is only the longest sleep:
 * the fallback that finds rows this instance was not told of (another process's insert, a
 * crashed instance's lease). New rows are meant to `poke` the worker.
 */
export function startOutboxWorker<R>(round: () => Promise<R>, options: { intervalMs: number; onError: (error: unknown) => void; schedule?: OutboxSchedule; firstRoundAfterMs?: number }): OutboxWorker<R> {
  let running: Promise<R> | undefined;
  let stopped = false;
  let poked = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = (delayMs: number) => {
    if (stopped) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (running !== undefined || stopped) return;
      next().catch(options.onError);
    }, delayMs);
    timer.unref();
  };
  const sleepAfterRound = async () => {
    const { schedule } = options;
    if (schedule === undefined) return arm(options.intervalMs);
    let delay = options.intervalMs;
    try {
      const due = await schedule.nextDueAt();
      if (due !== undefined) delay = Math.min(options.intervalMs, due <= schedule.now() ? ALREADY_DUE_RECHECK_MS : due - schedule.now());
    } catch (error) {
      options.onError(error);
    }
    // A poke or a round that started while the due time was read arms the timer itself.
    if (running === undefined && !stopped) arm(delay);
  };
  const next = (): Promise<R> => {
    const previous = running ?? Promise.resolve(undefined);
    const current = previous
      .catch(() => undefined)
      .then(() => round())
      .finally(() => {
        if (running !== current) return;
        running = undefined;
        if (poked && !stopped) {
          poked = false;
          next().catch(options.onError);
          return;
        }
        sleepAfterRound().catch(options.onError);
      });
    running = current;
    return current;
  };
  // With a schedule, a round at start sends what a restart left due.
  arm(options.schedule ? (options.firstRoundAfterMs ?? 0) : options.intervalMs);
  return {
    runNow: next,
    poke() {
      if (stopped) return;
      if (running !== undefined) poked = true;
      else next().catch(options.onError);
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}
