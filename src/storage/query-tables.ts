/**
 * What: the tables a compiled Kysely query reads and the tables it changes, read from its operation
 * tree (never from its SQL text), for the caches that must learn them (storage/coherence.ts,
 * storage/committed-changes.ts) and the table-ownership test.
 * Invariant: an UPDATE, a DELETE, a MERGE, an INSERT … ON CONFLICT DO UPDATE and an INSERT OR
 * REPLACE change their target, in a data-modifying CTE too; a plain INSERT and ON CONFLICT DO
 * NOTHING change no existing row. A raw `sql` statement has no tree to read: it declares its tables
 * (declareTables), or its answer is `undefined`, "not known", which every caller treats as the
 * widest answer it can give.
 * Tested: test/storage/query-tables.test.ts, test/storage/committed-changes.test.ts (upserts).
 */
import { sql, type OperationNode, type RawBuilder, type RootOperationNode } from 'kysely';

/** A node as walked: any operation node, its fields read by name. */
type Node = OperationNode & Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as { kind?: unknown }).kind === 'string';
}

/** The table a TableNode (or an aliased one) names, without its schema. */
function tableName(node: unknown): string | undefined {
  if (!isNode(node)) return undefined;
  if (node.kind === 'AliasNode') return tableName(node.node);
  if (node.kind !== 'TableNode') return undefined;
  const identifier = (node.table as { identifier?: { name?: unknown } } | undefined)?.identifier;
  return typeof identifier?.name === 'string' ? identifier.name : undefined;
}

/**
 * Every node under `root` (itself included), depth first; arrays of nodes are walked too. A
 * column reference (`t.user_id`, `selectAll('t')`) names a table of the FROM clause, often by its
 * alias, and is not walked into: the tables are where FROM, JOIN, INTO and UPDATE name them.
 */
function walk(root: unknown, visit: (node: Node) => void): void {
  if (Array.isArray(root)) {
    for (const item of root) walk(item, visit);
    return;
  }
  if (!isNode(root)) return;
  visit(root);
  if (root.kind === 'ReferenceNode') return;
  for (const key in root) {
    if (key === 'kind') continue;
    const value = root[key];
    if (typeof value === 'object' && value !== null) walk(value, visit);
  }
}

/** The tables a raw statement declares, by what it does to them. */
export interface DeclaredTables {
  reads?: readonly string[];
  /** Inserted into: new rows only (no cache holds a row that did not exist). */
  inserts?: readonly string[];
  /** Whose existing rows it updates or deletes (an upsert's target too). */
  changes?: readonly string[];
}

const DECLARATION = /^ \/\* tables: reads=([a-z0-9_,]*) inserts=([a-z0-9_,]*) changes=([a-z0-9_,]*) \*\/$/;
const TABLE = /^[a-z0-9_]+$/;

/**
 * Issue #37 §4: a raw `sql` statement names its tables, as a leading comment the classifiers read
 * from its tree (tablesNamed, tablesChanged) instead of guessing from its text. Put it last, so
 * the statement still opens with its verb (the metrics' operation label):
 * sql`with … ${declareTables({ changes: ['oauth_codes'], inserts: ['oauth_access_tokens'] })}`.
 * test/storage/query-tables.test.ts fails on a raw statement of a repository that does not.
 */
export function declareTables(declared: DeclaredTables): RawBuilder<unknown> {
  const list = (tables: readonly string[] | undefined) => {
    for (const table of tables ?? []) if (!TABLE.test(table)) throw new Error(`declareTables: "${table}" is not a table name`);
    return (tables ?? []).join(',');
  };
  return sql.raw(` /* tables: reads=${list(declared.reads)} inserts=${list(declared.inserts)} changes=${list(declared.changes)} */`);
}

/** What a raw tree declares (declareTables), or undefined when it declares nothing. */
function declaredIn(root: RootOperationNode): { named: Set<string>; changed: Set<string> } | undefined {
  let found: { named: Set<string>; changed: Set<string> } | undefined;
  walk(root, (node) => {
    if (found !== undefined || node.kind !== 'RawNode') return;
    for (const fragment of (node.sqlFragments ?? []) as readonly string[]) {
      const match = DECLARATION.exec(fragment);
      if (match === null) continue;
      const split = (text: string | undefined) => (text ? text.split(',') : []);
      const [reads, inserts, changes] = [split(match[1]), split(match[2]), split(match[3])];
      found = { named: new Set([...reads, ...inserts, ...changes]), changed: new Set(changes) };
      return;
    }
  });
  return found;
}

/** Whether the tree holds raw SQL (sql``), whose tables cannot be read from it. */
function hasRaw(root: RootOperationNode): boolean {
  let raw = false;
  walk(root, (node) => {
    if (node.kind === 'RawNode') raw = true;
  });
  return raw;
}

/** The names the query's WITH clauses give their CTEs: tables of the statement, not of the database. */
function cteNames(root: RootOperationNode): Set<string> {
  const names = new Set<string>();
  walk(root, (node) => {
    if (node.kind === 'CommonTableExpressionNameNode') {
      const name = tableName(node.table);
      if (name !== undefined) names.add(name);
    }
  });
  return names;
}

/**
 * The database tables the query names anywhere (reads and writes), in lower case; for raw SQL,
 * what it declares (declareTables), else undefined: its tables cannot be known from the tree.
 */
export function tablesNamed(root: RootOperationNode): ReadonlySet<string> | undefined {
  if (hasRaw(root)) return declaredIn(root)?.named;
  const ctes = cteNames(root);
  const tables = new Set<string>();
  walk(root, (node) => {
    if (node.kind !== 'TableNode') return;
    const name = tableName(node);
    if (name !== undefined && !ctes.has(name)) tables.add(name.toLowerCase());
  });
  return tables;
}

/**
 * The tables whose existing rows the query may change (update, delete, merge, upsert, replace), in
 * lower case; for raw SQL, what it declares changed, else undefined.
 */
export function tablesChanged(root: RootOperationNode): ReadonlySet<string> | undefined {
  if (hasRaw(root)) return declaredIn(root)?.changed;
  const changed = new Set<string>();
  const add = (node: unknown) => {
    const name = tableName(node);
    if (name !== undefined) changed.add(name.toLowerCase());
  };
  walk(root, (node) => {
    switch (node.kind) {
      case 'UpdateQueryNode':
        add(node.table);
        break;
      case 'DeleteQueryNode':
        for (const from of ((node.from as { froms?: unknown[] } | undefined)?.froms ?? []) as unknown[]) add(from);
        break;
      case 'MergeQueryNode':
        add(node.into);
        break;
      case 'InsertQueryNode': {
        const onConflict = node.onConflict as { updates?: readonly unknown[] } | undefined;
        const orAction = (node.orAction as { action?: unknown } | undefined)?.action;
        // ON CONFLICT DO UPDATE rewrites the existing row and OR REPLACE deletes it for another:
        // both change a row a cache may hold (issue #37 §4). DO NOTHING leaves it as it was.
        if ((onConflict?.updates?.length ?? 0) > 0 || node.onDuplicateKey !== undefined || node.replace === true || orAction === 'replace') add(node.into);
        break;
      }
    }
  });
  return changed;
}
