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
 *
 * With `maxInFlight`, at most that many statements are out at once and rows that arrive meanwhile
 * wait for one to settle, then go together: group commit proper. Under load the statements grow
 * with the load instead of multiplying (an instance serving a third of the requests would
 * otherwise send three times the statements per row); when nothing is out a row leaves at the end
 * of its turn, as without the bound.
 */
export function batched<I, R>(run: BatchStatement<I, R>, maxRows = MAX_ROWS, maxInFlight = Number.POSITIVE_INFINITY): (item: I) => Promise<R | undefined> {
  const queue: Pending<I, R>[] = [];
  let scheduled = false;
  let inFlight = 0;

  const settle = (batch: readonly Pending<I, R>[], results: readonly (R | undefined)[]) => {
    for (let i = 0; i < batch.length; i += 1) (batch[i] as Pending<I, R>).resolve(results[i]);
  };

  const send = (batch: readonly Pending<I, R>[]): Promise<void> =>
    run(batch.map((p) => p.item)).then(
      (results) => settle(batch, results),
      (error: unknown) => {
        if (batch.length === 1) {
          (batch[0] as Pending<I, R>).reject(error);
          return;
        }
        // One row broke the statement (a constraint, a value): each row alone, so that only its
        // own request fails.
        for (const pending of batch) void send([pending]);
      },
    );

  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };

  const flush = () => {
    scheduled = false;
    while (queue.length > 0 && inFlight < maxInFlight) {
      const batch = queue.splice(0, maxRows);
      inFlight += 1;
      void send(batch).then(() => {
        inFlight -= 1;
        if (queue.length > 0) schedule();
      });
    }
  };

  return (item) =>
    new Promise<R | undefined>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      schedule();
    });
}
