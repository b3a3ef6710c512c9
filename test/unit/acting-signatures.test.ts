import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Issue #37 §1: every exported service function that changes state takes `acting: Acting<…>` as its
 * parameter right after `deps`, so who acts, from where and in which request reaches the service
 * (which decides whether they may) and the events it emits (which the audit log records).
 *
 * What "changes state" means here, read from the source with TypeScript's parser:
 *  - its name starts with a verb of change (VERBS), or
 *  - its body calls `changing`, `emitted` or `.transaction(`, or a function of a *.repository.ts
 *    that writes (its body names insertInto/updateTable/deleteFrom/replaceInto/mergeInto, or SQL
 *    text that inserts, updates or deletes; a repository function calling one of its own writers
 *    writes too), or another service function that changes state (followed through the imports).
 * The two readings check each other: a verb-named function that writes nothing is listed in
 * ALLOWED with the reason it needs no acting, and a function that writes under another name is
 * found by its body.
 *
 * Not checked: a function whose first parameter, or whose parameter after `deps`, is the caller's
 * transaction (`trx`, or a `db` typed `Executor`/`Transaction`): it is one step of a change its caller runs, and the caller holds the
 * acting and emits the event. A function with no `deps` cannot write. Nor does calling an ALLOWED
 * function make its caller change state: what makes it need no acting holds for its callers too.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The first word of a camelCase name: `createWebhook` → `create`. */
const VERBS = new Set([
  'create', 'update', 'delete', 'remove', 'reset', 'set', 'add', 'post', 'edit', 'install', 'regenerate', 'accept',
  'decline', 'cancel', 'leave', 'join', 'change', 'rename', 'move', 'overwrite', 'enable', 'disable', 'sign', 'register',
  'record', 'revoke', 'issue', 'exchange', 'deauthorize', 'execute', 'open', 'store', 'save', 'write', 'invite', 'rotate',
  'decide', 'start', 'end', 'replace', 'seal', 'ensure', 'append', 'hold', 'take', 'authenticate',
]);

/**
 * Exported service functions that a verb or their body marks as changing state but that take no
 * acting, each with why it needs none.
 */
const ALLOWED: Record<string, string> = {
  'applications/bots.service.ts authenticateBot': 'reads the bot token that will act; the routes build the acting from what it finds (http/acting.ts actorActing)',
  'audit/audit.service.ts recordAuditLog': 'subscribes the audit recorder to the bus once at start-up; writes nothing itself',
  'oidc/oidc-keys.service.ts ensureSigningKeys': 'start-up: creates the first signing keys when there are none; no one acts (the CLI rotation takes an acting)',
  'oidc/oidc-keys.service.ts signJwt': 'signs a token in memory; writes nothing',
  'oidc/oidc.service.ts openIdGate': '"openId…" names OpenID, not the verb open; it reads the request and the session',
  'oidc/oidc.service.ts openIdClientSettings': '"openId…" names OpenID, not the verb open; a read',
  'oidc/oidc.service.ts openIdPortalView': '"openId…" names OpenID, not the verb open; a read',
  'oauth/identity.service.ts authenticateBearer': 'reads the bearer token that will act; the routes build the acting from what it finds',
  'oauth/identity.service.ts authenticateBearerWithPerson': 'reads the bearer token that will act; the routes build the acting from what it finds',
  'reveals/reveals.service.ts holdOnce': "a one-time display slot of the signed-in session's own page (a new secret shown once after the change that made it, which was audited); nobody's rights are involved",
  'reveals/reveals.service.ts takeOnce': 'reads and clears that slot for the same session; nobody acts on anything of anyone',
  'resources/uploaded-images.service.ts storeUploadedImage': 'writes image bytes to the blob store under a key no row names yet; the change that names it (a person, server, app or webhook service taking an acting) is the one checked and audited',
  'webhooks/compat-execute.service.ts sealPlainGithubSecrets': 'start-up maintenance: seals secrets a migration carried over in plain text; no one acts',
  'webhooks/execute.service.ts openWebhook': "the webhook URL's gate: it finds the webhook (and takes from its rate-limit bucket) that will then act as Acting<WebhookActor>",
  'accounts/passkeys.service.ts verifySecondFactorPasskey': "checks a passkey assertion and spends its single-use challenge; the change it proves (the session) is completeSecondStep's, which takes the sign-in's Acting and emits signin.succeeded",
  'mfa/mfa.service.ts beginPendingSignIn': "a step of signIn, which takes the sign-in's Acting: it stores the five-minute pending second step (and purges expired ones); completeSecondStep records the sign-in",
  'messages/messages.service.ts storeWebhookMessage': "the insert step of executeWebhook, which takes Acting<WebhookActor> and emits message.created once this token-checked insert succeeds (a refused insert emits nothing); DESIGN §5 keeps it a bare pass-through of the insert's promise",
  'applications/installs.service.ts installConsentView': '"install" is a noun here: the view of the install consent page, a read',
  'webhooks/compat-execute.service.ts githubSecretOf': "reads a webhook's GitHub secret to check a delivery; a value still sealed the old way is sealed again on the way (maintenance, nobody's change)",
  'accounts/sessions.service.ts resolveSession': 'reads the session cookie that will act; the routes build the acting from the person it finds',
  'interactions/followups.service.ts openInteractionToken': "the follow-up routes' gate, as openWebhook: it finds the interaction (and takes from its rate-limit bucket) whose app's bot then acts",
  'interactions/followups.service.ts recordInteraction': "a step of invokeCommand, which takes the invoker's Acting: the interaction is stored before it is sent, so an answer by callback or a follow-up finds it",
  'mail/mail.service.ts queueMail': "a step of the caller's change, in its transaction (issue #38 §1): the service that sends the mail takes the acting and emits that change's event",
  'mail/mail.service.ts createMailTransport': 'builds the SMTP (or log:) client in memory; writes nothing',
  'mail/mail.service.ts sendQueuedMail': "the mail worker delivering what was queued (each mail's change was acted and audited when it was queued); no one acts",
  'accounts/people-admin.service.ts disableEffects': '"disable" names the action it previews: a read of what disabling a person would end, for the confirmation (issue #39)',
  'mail/mail.service.ts startMailWorker': "start-up: starts this instance's mail worker; no one acts",
  'app-events/app-events.service.ts appEndpointsOf': "reads an app's endpoints, making its signing key pair the first time it is needed (issue #40 §1: every app has one); derived state nobody changes",
  'app-events/app-events.service.ts recordAppEvents': 'subscribes the app-event outbox recorder to the bus once at start-up; writes nothing itself (each change it records is acted and audited)',
  'app-events/app-events.service.ts startAppEventWorker': "start-up: starts this instance's app-event worker; no one acts",
  'files/files.service.ts receiveUpload': "a step of the message change that takes the acting (execute, a webhook message's edit, a bot's post): it stores the request's files before the message, which emits message.created/updated; a refused message removes them (issue #42 §1)",
  'files/files.service.ts settleMessageFiles': "a step of the same message change: it applies the payload's attachments[] (names, alt text) to that request's files",
  'files/files.service.ts discardFiles': "removes the files of a change that was refused or of a message already deleted (whose deletion took the acting and emitted message.deleted)",
  'files/files.service.ts removeFilesOfMessages': 'a step of a message deletion that takes the acting and emits message.deleted: its files go with it',
};

/**
 * Functions not converted yet, each reported to the lead; the test fails when one is converted
 * (so the entry goes) and when a function missing from here takes no acting.
 */
const PENDING: Record<string, string> = {};

interface Fn {
  key: string;
  name: string;
  params: { name: string; type: string }[];
  /** Names called in the body: plain identifiers and the method name of `x.name(…)`. */
  calls: Set<string>;
  /** Whether the body writes by itself (repository files) or runs a transaction (`.transaction(`). */
  writesItself: boolean;
  line: number;
}

interface Parsed {
  fns: Fn[];
  /** Imported name → the module path it comes from, as written. */
  imports: Map<string, string>;
}

const WRITE_BUILDERS = new Set(['insertInto', 'updateTable', 'deleteFrom', 'replaceInto', 'mergeInto']);
const WRITE_SQL = /\b(?:insert\s+(?:or\s+\w+\s+)?into|update\s+["\w.]+\s+set|delete\s+from)\b/i;

/** Every exported function of `source` (declarations and `export const f = (…) => …`). */
export function parseModule(path: string, source: string): Parsed {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
  const imports = new Map<string, string>();
  const fns: Fn[] = [];
  const line = (node: ts.Node) => file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
  const add = (name: string, fn: ts.SignatureDeclaration & { body?: ts.Node | undefined }, at: ts.Node) => {
    const calls = new Set<string>();
    let writesItself = false;
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        if (ts.isIdentifier(callee)) calls.add(callee.text);
        else if (ts.isPropertyAccessExpression(callee)) {
          calls.add(callee.name.text);
          if (WRITE_BUILDERS.has(callee.name.text) || callee.name.text === 'transaction') writesItself = true;
        }
      }
      if ((ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node) || ts.isStringLiteral(node)) && WRITE_SQL.test(node.text)) writesItself = true;
      ts.forEachChild(node, visit);
    };
    if (fn.body) visit(fn.body);
    const params = fn.parameters.map((p) => ({ name: p.name.getText(file), type: p.type ? p.type.getText(file) : '' }));
    fns.push({ key: `${path.replace(/^src\/modules\//, '')} ${name}`, name, params, calls, writesItself, line: line(at) });
  };
  for (const statement of file.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const bindings = statement.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) imports.set(element.name.text, statement.moduleSpecifier.text);
      continue;
    }
    const exported = ts.canHaveModifiers(statement) && (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) continue;
    if (ts.isFunctionDeclaration(statement) && statement.name) add(statement.name.text, statement, statement);
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        const init = declaration.initializer;
        if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) add(declaration.name.getText(file), init, declaration);
      }
    }
  }
  return { fns, imports };
}

/** The names of a repository file's exported functions that write (directly or through one of its own writers). */
export function repositoryWriters(parsed: Parsed): Set<string> {
  const writers = new Set(parsed.fns.filter((f) => f.writesItself).map((f) => f.name));
  for (let grew = true; grew; ) {
    grew = false;
    for (const f of parsed.fns) {
      if (!writers.has(f.name) && [...f.calls].some((c) => writers.has(c))) {
        writers.add(f.name);
        grew = true;
      }
    }
  }
  return writers;
}

const firstWord = (name: string) => /^[a-z]+/.exec(name)?.[0] ?? '';

/** Why `fn` counts as changing state, or undefined. */
function changeEvidence(fn: Fn, writerOf: (name: string) => boolean, changingServices: ReadonlySet<string>): string | undefined {
  if (VERBS.has(firstWord(fn.name))) return `its name's verb (${firstWord(fn.name)})`;
  if (fn.calls.has('changing') || fn.calls.has('emitted')) return 'it calls changing/emitted';
  if (fn.writesItself) return 'it writes (a builder, SQL text or .transaction)';
  const writer = [...fn.calls].find(writerOf);
  if (writer !== undefined) return `it calls ${writer}, which writes`;
  const service = [...fn.calls].find((c) => changingServices.has(c));
  if (service !== undefined) return `it calls ${service}, which changes state`;
  return undefined;
}

/**
 * Whether `fn` is one step of its caller's change (its first parameter, or the one after deps, is
 * the caller's transaction) or has no deps at all.
 */
function notStandalone(fn: Fn): boolean {
  const first = fn.params[0];
  if (first === undefined) return true;
  if (first.name === 'trx' || /^(?:Transaction|Executor|Kysely)\b/.test(first.type)) return true;
  const second = fn.params[1];
  if (/^_?deps$/.test(first.name) && second !== undefined && (second.name === 'trx' || /^Transaction\b/.test(second.type))) return true;
  return !/^_?deps$/.test(first.name);
}

const takesActing = (fn: Fn) => fn.params[1]?.name === 'acting' && /^Acting\b/.test(fn.params[1].type);

interface Finding {
  key: string;
  line: number;
  why: string;
  second: string;
}

/**
 * The exported functions of `services` (path → source) that change state and take no acting
 * second. `repositories` (path → source) say which repository functions write.
 */
export function missingActing(services: ReadonlyMap<string, string>, repositories: ReadonlyMap<string, string>, allowed: Readonly<Record<string, string>> = {}): { findings: Finding[]; changing: Set<string> } {
  const writers = new Map<string, Set<string>>();
  for (const [path, source] of repositories) writers.set(path, repositoryWriters(parseModule(path, source)));
  const parsed = new Map([...services].map(([path, source]) => [path, parseModule(path, source)]));
  const resolve = (from: string, specifier: string) => {
    const parts = from.split('/').slice(0, -1);
    for (const piece of specifier.replace(/\.js$/, '.ts').split('/')) {
      if (piece === '..') parts.pop();
      else if (piece !== '.') parts.push(piece);
    }
    return parts.join('/');
  };
  // Service functions that change state, by key and by exported name (a call reaches another
  // service's function by its imported name); grown until nothing more is found.
  const changing = new Map<string, string>();
  const changingNames = (path: string, p: Parsed) => {
    const names = new Set<string>();
    const spreads = (f: Fn) => changing.has(f.key) && allowed[f.key] === undefined;
    for (const f of p.fns) if (spreads(f)) names.add(f.name);
    for (const [name, specifier] of p.imports) {
      const target = parsed.get(resolve(path, specifier));
      if (target?.fns.some((f) => f.name === name && spreads(f))) names.add(name);
    }
    return names;
  };
  for (let grew = true; grew; ) {
    grew = false;
    for (const [path, p] of parsed) {
      const writerOf = (name: string) => {
        const specifier = p.imports.get(name);
        return specifier !== undefined && /\.repository\.js$/.test(specifier) && (writers.get(resolve(path, specifier))?.has(name) ?? false);
      };
      const known = changingNames(path, p);
      for (const f of p.fns) {
        if (changing.has(f.key)) continue;
        const why = changeEvidence(f, writerOf, known);
        if (why !== undefined) {
          changing.set(f.key, why);
          grew = true;
        }
      }
    }
  }
  const findings: Finding[] = [];
  for (const p of parsed.values()) {
    for (const f of p.fns) {
      const why = changing.get(f.key);
      if (why === undefined || notStandalone(f) || takesActing(f)) continue;
      const second = f.params[1] ? `${f.params[1].name}: ${f.params[1].type}` : 'nothing';
      findings.push({ key: f.key, line: f.line, why, second });
    }
  }
  return { findings, changing: new Set(changing.keys()) };
}

function sourcesOf(suffix: string): Map<string, string> {
  const files = readdirSync(`${ROOT}src/modules`, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith(suffix));
  return new Map(files.map((f) => [`src/modules/${f.replaceAll('\\', '/')}`, readFileSync(`${ROOT}src/modules/${f}`, 'utf8')]));
}

describe('acting signatures (issue #37 §1)', () => {
  const header = "import type { Deps } from '../../deps.js';\nimport type { Acting } from '../../core/acting.js';\nimport { insertThing, findThing } from './things.repository.js';\n";
  const repository = new Map([
    ['src/modules/things/things.repository.ts', 'export async function insertThing(db: Db, id: string) { await db.insertInto("things").values({ id }).execute(); }\nexport async function findThing(db: Db, id: string) { return db.selectFrom("things").selectAll().where("id", "=", id).executeTakeFirst(); }\nexport async function bumpThing(db: Db, id: string) { await sql`update things set n = n + 1 where id = ${id}`.execute(db); }\nexport const keepThing = (db: Db, id: string) => insertThing(db, id);\n'],
  ]);
  const check = (code: string) => missingActing(new Map([['src/modules/things/things.service.ts', `${header}${code}`]]), repository).findings.map((f) => `${f.key.split(' ')[1]}: ${f.why}`);

  it('repository writers are the functions that name a write builder or write SQL, or call one of their own writers', () => {
    expect([...repositoryWriters(parseModule('x.repository.ts', repository.get('src/modules/things/things.repository.ts') ?? ''))].sort()).toEqual(['bumpThing', 'insertThing', 'keepThing']);
  });

  it('a verb-named service function without an acting second fails; with `acting: Acting<…>` second it passes', () => {
    expect(check('export async function deleteThing(deps: Deps, id: string) { return [deps, id]; }\n')).toEqual(['deleteThing: its name\'s verb (delete)']);
    expect(check('export async function deleteThing(deps: Deps, id: string, acting: Acting) { return [deps, id, acting]; }\n')).toEqual(['deleteThing: its name\'s verb (delete)']);
    expect(check('export async function deleteThing(deps: Deps, acting: Acting, id: string) { return [deps, id, acting]; }\n')).toEqual([]);
  });

  it('a function that writes under another name is found by its body: a repository writer, changing/emitted, or another service that changes state', () => {
    expect(check('export async function thingPlease(deps: Deps, id: string) { await insertThing(deps.db, id); }\n')).toEqual(['thingPlease: it calls insertThing, which writes']);
    expect(check('export async function thingPlease(deps: Deps, id: string) { await changing(deps, x, async () => id); }\n')).toEqual(['thingPlease: it calls changing/emitted']);
    expect(check('export async function addThing(deps: Deps, acting: Acting, id: string) { await insertThing(deps.db, id); }\nexport const thingPlease = (deps: Deps, id: string) => addThing(deps, someone, id);\n')).toEqual([
      'thingPlease: it calls addThing, which changes state',
    ]);
  });

  it('a read, a pure function and a step inside the caller’s transaction pass', () => {
    expect(check('export async function thing(deps: Deps, id: string) { return findThing(deps.db, id); }\n')).toEqual([]);
    expect(check('export function createdName(name: string) { return name.trim(); }\n')).toEqual([]);
    expect(check('export async function addThingInTransaction(trx: Transaction<Database>, id: string) { await insertThing(trx, id); }\n')).toEqual([]);
  });

  it('every exported service function of src/modules that changes state takes `acting: Acting<…>` after deps', () => {
    const { findings } = missingActing(sourcesOf('.service.ts'), sourcesOf('.repository.ts'), ALLOWED);
    const missing = findings.filter((f) => ALLOWED[f.key] === undefined && PENDING[f.key] === undefined).map((f) => `${f.key} (line ${f.line}): changes state because ${f.why}; its second parameter is ${f.second}`);
    expect(missing, `These service functions change state but do not take \`acting: Acting<…>\` right after deps:\n${missing.join('\n')}\n`).toEqual([]);
  });

  it('every ALLOWED and PENDING entry still names a function that would otherwise fail (a stale entry goes)', () => {
    const { findings } = missingActing(sourcesOf('.service.ts'), sourcesOf('.repository.ts'), ALLOWED);
    const found = new Set(findings.map((f) => f.key));
    const stale = [...Object.keys(ALLOWED), ...Object.keys(PENDING)].filter((key) => !found.has(key));
    expect(stale).toEqual([]);
  });
});
