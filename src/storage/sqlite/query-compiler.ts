/**
 * What: SQLite's query compiler with whole-number LIMIT and OFFSET values written into the SQL.
 * Invariant: only a whole number from 0 to LITERAL_MAX (a number or a bigint) becomes a literal,
 * written as digits; any other value (larger, a placeholder of storage/prepared.ts, a string, an
 * expression) stays a bound parameter.
 * Tested: test/storage/sqlite-query-compiler.test.ts.
 */
import { SqliteQueryCompiler, ValueNode, type LimitNode, type OffsetNode, type OperationNode } from 'kysely';

/** The largest LIMIT or OFFSET written into the SQL. */
export const LITERAL_MAX = 200;

/**
 * Why (docs/performance.md §Bound LIMIT): a statement whose LIMIT or OFFSET is a bound parameter
 * costs SQLite more on every run than the same statement with the number written in: 4.5 µs more
 * for a one-row lookup by primary key, 23 µs more for the three-table join that finds a server's
 * command, measured with better-sqlite3 on the same prepared statement. Kysely binds every value,
 * so `.limit(1)` would pay it on every call. Up to LITERAL_MAX the numbers are few (one-row
 * limits, page sizes up to Discord's 100, the delivery log's 100), so writing them in adds at most
 * that many statements per query to the statement cache; a larger one (an offset deep into a
 * list) stays bound rather than make a statement of its own.
 */
export class SqliteLiteralLimitCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    if (!this.#appendWholeNumber('limit ', node.limit)) super.visitLimit(node);
  }

  protected override visitOffset(node: OffsetNode): void {
    if (!this.#appendWholeNumber('offset ', node.offset)) super.visitOffset(node);
  }

  /** Writes `keyword` and the value as digits when it is a whole number from 0 to LITERAL_MAX; false otherwise. */
  #appendWholeNumber(keyword: string, value: OperationNode): boolean {
    if (!ValueNode.is(value)) return false;
    const number = value.value;
    const whole = (typeof number === 'number' && Number.isInteger(number) && number >= 0 && number <= LITERAL_MAX) || (typeof number === 'bigint' && number >= 0n && number <= BigInt(LITERAL_MAX));
    if (!whole) return false;
    this.append(keyword);
    this.append(String(number));
    return true;
  }
}
