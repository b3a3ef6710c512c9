import type { ColumnType } from 'kysely';

/**
 * Column types that say honestly what the drivers return, so the compiler forces a conversion at
 * the repository boundary: better-sqlite3 (safe integers on) returns 64-bit integers as bigint,
 * pg returns int8 as a decimal string.
 */

/** A snowflake id column: stored as a 64-bit integer, written as a decimal string. */
export type DbId = ColumnType<string | bigint, string, string>;
/** A nullable snowflake id column. */
export type DbIdNullable = ColumnType<string | bigint | null, string | null, string | null>;
/** A 64-bit integer such as a millisecond timestamp or a counter. */
export type DbInt = ColumnType<number | bigint | string, number, number>;
export type DbIntNullable = ColumnType<number | bigint | string | null, number | null, number | null>;
/** Booleans are 0/1 integers on both databases, which keeps migrations portable. */
export type DbBool = ColumnType<number | bigint | string | boolean, 0 | 1, 0 | 1>;

export function toId(value: string | bigint): string {
  return typeof value === 'string' ? value : value.toString();
}

export function toIdOrNull(value: string | bigint | null): string | null {
  return value === null ? null : toId(value);
}

export function toNum(value: number | bigint | string): number {
  return typeof value === 'number' ? value : Number(value);
}

export function toNumOrNull(value: number | bigint | string | null): number | null {
  return value === null ? null : toNum(value);
}

export function toBool(value: number | bigint | string | boolean): boolean {
  return value === true || value === 1 || value === 1n || value === '1';
}

export function fromBool(value: boolean): 0 | 1 {
  return value ? 1 : 0;
}

/** A unique or primary-key violation on either database, for "already exists" answers. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
