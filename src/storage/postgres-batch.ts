/**
 * What: the rows that concurrent requests of one event-loop turn write, gathered into one
 * multi-row statement: PostgreSQL's counterpart of SQLite's group commit (storage/group-commit.ts).
 * Invariant: a caller's promise settles only after the one autocommit statement that carried its
 * row has committed (DESIGN §5: acknowledged only once durable); a statement that fails is run
 * again row by row, so a bad row fails its own request and no other.
 * Tested: test/storage/postgres-batch.test.ts, test/http/webhook-execute-round-trips.test.ts.
 */

/** Runs one statement for `items`; answers one result per item, in order (undefined: no row came back). */
type BatchStatement<I, R> = (items: readonly I[]) => Promise<readonly (R | undefined)[]>;

/** More rows than this go into a second statement (a bound on parameter arrays and lock time). */
const MAX_ROWS = 500;

interface Pending<I, R> {
  item: I;
  resolve: (result: R | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * `batched(run)` returns `write(item)`: items written before the turn ends (setImmediate: after
 * the I/O callbacks that delivered this turn's requests) go out together in one `run`.
 */
export function batched<I, R>(run: BatchStatement<I, R>, maxRows = MAX_ROWS): (item: I) => Promise<R | undefined> {
  let queue: Pending<I, R>[] = [];
  let scheduled = false;

  const settle = (batch: readonly Pending<I, R>[], results: readonly (R | undefined)[]) => {
    for (let i = 0; i < batch.length; i += 1) (batch[i] as Pending<I, R>).resolve(results[i]);
  };

  const send = (batch: readonly Pending<I, R>[]) => {
    run(batch.map((p) => p.item)).then(
      (results) => settle(batch, results),
      (error: unknown) => {
        if (batch.length === 1) {
          (batch[0] as Pending<I, R>).reject(error);
          return;
        }
        // One row broke the statement (a constraint, a value): each row alone, so that only its
        // own request fails.
        for (const pending of batch) send([pending]);
      },
    );
  };

  const flush = () => {
    scheduled = false;
    const all = queue;
    queue = [];
    for (let start = 0; start < all.length; start += maxRows) send(all.slice(start, start + maxRows));
  };

  return (item) =>
    new Promise<R | undefined>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
