import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Issue #37 §4, table ownership. The map table → module is generated, not kept: storage/database.ts
 * composes the Database interface from each module's *.table.ts types, so a table belongs to the
 * module whose *.table.ts declares its type (storage/ for its own two). Every statement of every
 * module repository is then read from the source with TypeScript's parser: the tables named by the
 * Kysely builders (selectFrom, insertInto, updateTable, deleteFrom, replaceInto, mergeInto, the
 * joins, hotLookup's `table`), which the compiler has checked against Database, and the tables of
 * raw `sql` text (FROM, JOIN, INTO, UPDATE). A table of another module fails the test unless it is
 * listed below with its reason, per repository file and per read or write.
 *
 * Why the source and not compiled queries: compiling a repository's queries means calling each
 * function with valid arguments (or recording the SQL its tests happen to run), which sees only the
 * branches some test takes; every builder call in the source is seen, taken or not, and its table
 * argument is typed against Database, so what is read is what runs.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The generated map: each Database table → the module whose *.table.ts declares its type. */
function tableOwners(): Map<string, string> {
  const source = readFileSync(`${ROOT}src/storage/database.ts`, 'utf8');
  const file = ts.createSourceFile('database.ts', source, ts.ScriptTarget.Latest, true);
  const moduleOfType = new Map<string, string>();
  const owners = new Map<string, string>();
  for (const statement of file.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const from = statement.moduleSpecifier.text;
      const module = /\/modules\/([^/]+)\//.exec(from)?.[1] ?? 'storage';
      const bindings = statement.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) moduleOfType.set(element.name.text, module);
    }
    if (ts.isInterfaceDeclaration(statement) && statement.name.text === 'Database') {
      for (const member of statement.members) {
        if (!ts.isPropertySignature(member) || !member.type || !ts.isTypeReferenceNode(member.type)) continue;
        const owner = moduleOfType.get(member.type.typeName.getText(file));
        if (owner === undefined) throw new Error(`storage/database.ts: ${member.name.getText(file)} has a type no *.table.ts declares`);
        owners.set(member.name.getText(file), owner);
      }
    }
  }
  return owners;
}

type Access = 'read' | 'write';
const WRITES = new Set(['insertInto', 'updateTable', 'deleteFrom', 'replaceInto', 'mergeInto']);
const READS = new Set(['selectFrom', 'innerJoin', 'leftJoin', 'rightJoin', 'fullJoin', 'crossJoin', 'innerJoinLateral', 'leftJoinLateral', 'using']);

/** Every (table, access) a repository file's statements name, with the line of each. */
function tablesOf(path: string, tables: ReadonlySet<string>): { table: string; access: Access; line: number }[] {
  const source = readFileSync(`${ROOT}${path}`, 'utf8');
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
  const found: { table: string; access: Access; line: number }[] = [];
  const line = (node: ts.Node) => file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
  const add = (name: string, access: Access, node: ts.Node) => {
    const table = name.trim().split(/\s+as\s+/i)[0]?.trim() ?? '';
    if (tables.has(table)) found.push({ table, access, line: line(node) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const access = WRITES.has(method) ? 'write' : READS.has(method) ? 'read' : undefined;
      const first = node.arguments[0];
      if (access !== undefined && first !== undefined) {
        if (ts.isStringLiteralLike(first)) add(first.text, access, first);
        else if (ts.isArrayLiteralExpression(first)) for (const element of first.elements) if (ts.isStringLiteralLike(element)) add(element.text, access, element);
      }
    }
    // hotLookup({ table: 'webhooks', … }): a cached select of that table.
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'hotLookup') {
      const declaration = node.arguments[0];
      if (declaration && ts.isObjectLiteralExpression(declaration)) {
        for (const property of declaration.properties) {
          if (ts.isPropertyAssignment(property) && property.name.getText(file) === 'table' && ts.isStringLiteralLike(property.initializer)) add(property.initializer.text, 'read', property);
        }
      }
    }
    // sql`…`: the tables its text names after FROM, JOIN, INTO, UPDATE (and DELETE FROM).
    if (ts.isTaggedTemplateExpression(node) && node.tag.getText(file) === 'sql') {
      const text = node.template.getText(file);
      for (const match of text.matchAll(/\b(from|join|into|update)\s+"?([a-z_][a-z0-9_]*)"?/gi)) {
        const keyword = (match[1] as string).toLowerCase();
        const before = text.slice(Math.max(0, (match.index ?? 0) - 8), match.index).toLowerCase();
        const access: Access = keyword === 'into' || keyword === 'update' || (keyword === 'from' && /delete\s*$/.test(before)) ? 'write' : 'read';
        // "do update set" names no table.
        if (keyword === 'update' && /do\s*$/.test(before)) continue;
        add(match[2] as string, access, node);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function repositories(): string[] {
  return readdirSync(`${ROOT}src/modules`, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.repository.ts'))
    .map((file) => `src/modules/${file}`)
    .sort();
}

/** `module:table:access` → where, for every statement naming another module's table. */
function foreignAccesses(): Map<string, string[]> {
  const owners = tableOwners();
  const tables = new Set(owners.keys());
  const foreign = new Map<string, string[]>();
  for (const path of repositories()) {
    const module = /src\/modules\/([^/]+)\//.exec(path)?.[1] as string;
    for (const { table, access, line } of tablesOf(path, tables)) {
      if (owners.get(table) === module) continue;
      const key = `${path.slice('src/modules/'.length)} ${access}s ${table}`;
      foreign.set(key, [...(foreign.get(key) ?? []), `${path}:${line}`]);
    }
  }
  return foreign;
}

/**
 * The statements that name another module's table, per repository file, each with its reason.
 * A read is a join kept in one round trip on a hot or listed path; a write stays with its caller
 * where it must commit in the caller's transaction (moving it to the owner's repository would need
 * the owner's service to take a transaction).
 */
const LISTED: Record<string, string> = {
  'accounts/sessions.repository.ts reads users': 'every page view: the session and its person in one round trip (DESIGN §5)',
  'app-events/app-events.repository.ts reads applications': "an app the operator disabled gets no events (issue #39): its endpoints are read with the app's disabled_at in one statement",
  'mfa/mfa.repository.ts reads passkeys': 'a passkey is a second factor (issue #38 §4): whether a person has one is one statement over both tables, so mfa/ depends on no accounts service (accounts/ already depends on mfa/)',
  'mfa/mfa.repository.ts writes passkeys': "the operator's reset of second factors and an account's deletion clear passkeys in the reset's own transaction",
  'mfa/mfa.repository.ts writes users': "users.mfa_enabled is kept in the same transaction as the enrolment or removal that changes it, so /users/@me reads it with no statement of its own",
  'mfa/mfa.repository.ts reads users': 'users.mfa_enabled, the flag the writes above keep',
  'oauth/introspection.repository.ts reads users': "introspection is a hot path (issue #41 §1): the token's person (username, sub) in the token lookup's statement",
  'oauth/introspection.repository.ts reads resource_servers': "introspection is a hot path (issue #41 §1): the token's audience in the token lookup's statement",
  'oauth/token-exchange.repository.ts reads resource_servers': "token exchange (RFC 8693) checks that the subject token's audience is served by the exchanging app: the audience's app read in the subject token's own statement",
  'applications/bots.repository.ts reads users': "a bot authenticates only while its app's owner is not disabled (issue #39), read in the token lookup's own statement",
  'applications/installs.repository.ts reads users': 'the installs list names each installer in the same query',
  'applications/installs.repository.ts reads roles': "a bot install's managed role (Discord: created and removed with the install)",
  'applications/installs.repository.ts writes roles': "a bot install's managed role is deleted in the uninstall's transaction",
  'applications/installs.repository.ts writes member_roles': "the managed role is given to the bot's member in the install's transaction",
  'directory/channels.repository.ts reads messages': "a channel's delete confirmation counts what it removes",
  'directory/mfa-level.repository.ts reads applications': "a server's MFA level holds a bot to its owner's second factor, on every permission check (issue #38 §4)",
  'directory/servers.repository.ts reads messages': "a server's delete confirmation counts what it removes",
  'directory/servers.repository.ts reads webhooks': "a server's delete confirmation counts what it removes, and deleting a server or channel reads the avatars of the webhooks it removes (ON DELETE CASCADE) to delete their uploaded blobs after the commit (webhooks → directory would be an import cycle)",
  'directory/servers.repository.ts reads server_installs': "a server's delete confirmation counts what it removes",
  'messages/dms.repository.ts reads dm_channels': "DM pairs: the table's type is declared in applications/bots.table.ts, but only DMs use it",
  'messages/dms.repository.ts writes dm_channels': 'a DM channel and its pair are created together (dm_channels_pair_unique decides a race)',
  'messages/dms.repository.ts writes channels': 'a DM channel is a channels row (server_id null) created with its pair',
  'messages/dms.repository.ts reads users': 'the DM list names the other party in the same query',
  'messages/dms.repository.ts reads members': 'whether two people share a server, for the DM rule, in one query',
  'messages/messages.repository.ts reads users': 'a channel view shows each author in the same query',
  'messages/message-interactions.repository.ts reads users': 'an app’s answer names who used the command ("<person> used /name") in the same query',
  'messages/ephemeral-messages.repository.ts reads users': 'an ephemeral message names its bot and who used the command in the same query, as message-interactions does',
  'messages/ephemeral-messages.repository.ts reads interactions': 'an ephemeral message lasts while its interaction’s token does (expires_at) and shows its command, read in the same query',
  'messages/read-state.repository.ts reads channels': "a server's unread channels in one index probe per channel",
  'messages/webhook-message.repository.ts reads webhooks': "PostgreSQL's execute checks the token in the insert's own statement (issue #26 §1)",
  'oauth/consents.repository.ts reads users': 'Authorized apps names each app’s owner in the same query',
  'oauth/consents.repository.ts reads applications': 'Authorized apps shows each app in the same query',
  'oauth/tokens.repository.ts reads users': "GET /users/@me on PostgreSQL: the token and its person in one statement (issue #26 §1)",
  'webhooks/webhooks.repository.ts writes channels': "channels.webhook_count is kept in the webhook insert's and delete's transaction (the per-channel limit, SPEC §8)",
  'webhooks/webhooks.repository.ts reads users': "the webhooks list names each creator in the same query",
};

describe('table ownership (issue #37 §4)', () => {
  it('every table of Database has its owner module, read from the *.table.ts that declares its type', () => {
    const owners = tableOwners();
    expect(owners.get('messages')).toBe('messages');
    expect(owners.get('webhooks')).toBe('webhooks');
    expect(owners.get('oauth_access_tokens')).toBe('oauth');
    expect(owners.get('worker_leases')).toBe('storage');
    expect(owners.size).toBeGreaterThan(25);
  });

  it('no repository names another module’s table unless it is listed with its reason', () => {
    const unlisted = [...foreignAccesses()].filter(([key]) => LISTED[key] === undefined).map(([key, where]) => `${key} (${where.join(', ')})`);
    expect(unlisted).toEqual([]);
  });

  it('every listed exception still exists (a moved statement leaves the list)', () => {
    const found = foreignAccesses();
    expect(Object.keys(LISTED).filter((key) => !found.has(key))).toEqual([]);
  });

  it('the reader sees builder calls, aliases, hotLookup and raw sql, and tells reads from writes', () => {
    const owners = tableOwners();
    const seen = tablesOf('src/modules/messages/dms.repository.ts', new Set(owners.keys()));
    expect(seen).toContainEqual(expect.objectContaining({ table: 'members', access: 'read' }));
    expect(seen).toContainEqual(expect.objectContaining({ table: 'channels', access: 'write' }));
    expect(tablesOf('src/modules/webhooks/webhooks.repository.ts', new Set(owners.keys()))).toContainEqual(expect.objectContaining({ table: 'webhooks', access: 'read' }));
    expect(tablesOf('src/modules/messages/webhook-message.repository.ts', new Set(owners.keys()))).toEqual(
      expect.arrayContaining([expect.objectContaining({ table: 'messages', access: 'write' }), expect.objectContaining({ table: 'webhooks', access: 'read' })]),
    );
  });
});
