/**
 * What: the events SQLite's write groups announce (sqlite/write-groups.ts) and the row cache
 * listens to (sqlite/row-cache.ts): the one place where a change of the database meets the rows
 * kept in memory.
 * Invariant: every change of what the connection reads is announced in line, before any read can
 * see past it: a write (before it runs), a lost group, a ROLLBACK TO, another connection's commit.
 * Tested: test/storage/write-events.test.ts, test/storage/row-cache.test.ts.
 */

/**
 * What the write groups announce, each in line before anything can read past it: the row cache
 * (sqlite/row-cache.ts) listens and decides what each one means for the rows it holds.
 */
export interface WriteEvents {
  /**
   * A statement that may change rows is about to run: the one table it writes, or undefined when
   * unknown (PRAGMA, ATTACH, a CTE…); `addsRowsOnly` when it is a plain INSERT into that table
   * (sqlite/statements.ts addsRowsOnly), which changes and deletes no row.
   */
  onWrite(table: string | undefined, addsRowsOnly?: boolean): void;
  /** A group's transaction ended without its COMMIT (the COMMIT failed, or an error such as disk full ended it): whatever it wrote is gone. */
  onCommitFailed(): void;
  /** A db.transaction() rolled back to its savepoint: its writes are gone. */
  onRollback(): void;
  /** Another connection committed since the last look (PRAGMA data_version, sqlite/core.ts). */
  onForeignCommit(): void;
}
