/**
 * What: Kysely's `log` hook fanned out to the query observers added later (metrics), and the same
 * fan-out handed to the runners that time their own statements (sqlite/write-groups.ts, postgres.ts).
 * Invariant: an observer sees the operation, duration and failure of a statement, never its SQL
 * text or parameters; with no observer the hook costs one size check.
 * Tested: test/storage/prepared.test.ts, test/storage/group-commit.test.ts (timings), test/http/operations.test.ts.
 */
import type { LogEvent } from 'kysely';

/**
 * Hears how long each statement run by a runner of its own took, and each COMMIT of a SQLite write
 * group. Called in line, with no promise of its own.
 */
export type StatementTimer = (operation: string, durationMs: number, failed: boolean) => void;

/** One executed statement, as metrics need it: never the SQL text or its parameters. */
export interface QueryTiming {
  /**
   * 'select', 'insert', 'update', 'delete', 'raw' for sql`` and migrations, or 'commit' for the
   * COMMIT of a SQLite write group (storage/sqlite/write-groups.ts).
   */
  operation: string;
  durationMs: number;
  failed: boolean;
}

export type QueryObserver = (timing: QueryTiming) => void;

/**
 * The operation a query node is timed as: 'InsertQueryNode' → 'insert'; sql`` by its first word
 * when `sql` is given and that word is insert, update, delete or select; the rest → 'raw'.
 */
export function statementOperation(kind: string, sql?: string): string {
  if (kind.endsWith('QueryNode')) return kind.slice(0, -'QueryNode'.length).toLowerCase();
  const first = sql === undefined ? undefined : /^\s*(insert|update|delete|select)\b/i.exec(sql)?.[1];
  return first === undefined ? 'raw' : first.toLowerCase();
}

/**
 * Kysely's `log` hook, fanned out to observers added later (the test support opens the database
 * before the services that measure it exist). Without observers it costs one size check.
 * `onActive` hears the fan-out function while there are observers and undefined when the last one
 * leaves: the SQLite core times its own statements in line with it (storage/sqlite/write-groups.ts).
 */
export function queryObservers(onActive?: (timer: StatementTimer | undefined) => void): {
  log: (event: LogEvent) => void;
  observe: (observer: QueryObserver) => () => void;
  /** Fans one timing out to every observer. */
  emit: StatementTimer;
} {
  const observers = new Set<QueryObserver>();
  const emit: StatementTimer = (operation, durationMs, failed) => {
    if (observers.size === 0) return;
    const timing = { operation, durationMs, failed };
    for (const observer of observers) observer(timing);
  };
  return {
    log(event) {
      emit(statementOperation(event.query.query.kind), event.queryDurationMillis, event.level === 'error');
    },
    observe(observer) {
      observers.add(observer);
      onActive?.(emit);
      return () => {
        observers.delete(observer);
        if (observers.size === 0) onActive?.(undefined);
      };
    },
    emit,
  };
}
