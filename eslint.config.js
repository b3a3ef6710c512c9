// @ts-check
import { readdirSync } from 'node:fs';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/**
 * Lint enforces what it can of DESIGN §2's direction rules; the rest is review.
 *  - core/ imports nothing from the rest of src/ and neither Fastify nor Kysely;
 *  - pure domain files (no role suffix) import neither Fastify nor Kysely;
 *  - routes never touch SQL (no Kysely, no repositories); services never see the request;
 *  - pages render what they are given (no Kysely, no repositories, no services);
 *  - only main.ts and cli/ read process.env;
 *  - the layers of docs/architecture.md ("Layers and import rules") point one way, no file
 *    imports another module's repository, and there is no import cycle (import-x below).
 */
const fastify = { group: ['fastify', '@fastify/*'], message: 'Only routes and http/ know about Fastify (DESIGN §2).' };
const kysely = { group: ['kysely'], message: 'Only repositories and storage/ import Kysely (DESIGN §2).', allowTypeImports: true };
const kyselyValues = { group: ['kysely'], message: 'Only repositories and storage/ import Kysely (DESIGN §2).' };
const repositories = { group: ['**/*.repository.js'], message: 'Routes and pages reach data through services (DESIGN §2).' };
const services = { group: ['**/*.service.js'], message: 'Pages render what they are given and never query (DESIGN §2).' };

const root = import.meta.dirname;
const modules = readdirSync(`${root}/src/modules`, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
const top = ['src/services.ts', 'src/app.ts', 'src/main.ts', 'src/cli'];

/**
 * docs/architecture.md, "Layers and import rules": each zone names what files in `target` may not
 * import (`from`), resolved paths, type imports included. The drawing there is this list.
 */
const layers = [
  { target: 'src/core', from: ['src/config', 'src/storage', 'src/rate-limit', 'src/realtime', 'src/events', 'src/web', 'src/http', 'src/modules', 'src/deps.ts', ...top], message: 'core/ is pure and imports nothing from src/.' },
  // Domain events sit on core and storage's types; realtime/ listens to them, the modules emit them.
  { target: 'src/events', from: ['src/config', 'src/rate-limit', 'src/realtime', 'src/web', 'src/http', 'src/modules', 'src/deps.ts', ...top], message: 'events/ sits below realtime/, http/ and the modules: it imports core/ and storage/ types only.' },
  { target: ['src/config', 'src/rate-limit', 'src/realtime'], from: ['src/web', 'src/http', 'src/modules', 'src/deps.ts', ...top], message: 'config/, rate-limit/ and realtime/ sit below web/, http/ and the modules.' },
  // Live updates may ride on the rate limiter's Redis round trips, never the reverse; the
  // connection itself is storage/redis.ts. Configuration comes in as arguments.
  { target: 'src/rate-limit', from: 'src/config', message: 'rate-limit/ receives its settings as arguments.' },
  { target: 'src/realtime', from: ['src/rate-limit', 'src/config'], message: 'realtime/ takes its Redis connection from storage/redis.ts and its settings as arguments.' },
  // storage/database.ts names every table: it imports each module's *.table.ts types, and nothing else above it.
  { target: 'src/storage/**', from: ['src/{config,rate-limit,realtime,web,http,cli}/**', 'src/modules/**', 'src/{deps,services,app,main}.ts'], except: ['**/src/modules/*/*.table.ts'], message: 'storage/ sits below every module; only the *.table.ts types go up.' },
  { target: 'src/http', from: ['src/modules', 'src/deps.ts', ...top], message: 'http/ is the Fastify glue under the modules: routes here take what they read, not the services object.' },
  { target: 'src/modules', from: top, message: 'Modules receive their dependencies (src/deps.ts types); services.ts and app.ts build and wire them.' },
  { target: 'src/deps.ts', from: ['src/modules', ...top], message: 'deps.ts names the infrastructure the modules receive.' },
  { target: 'src/services.ts', from: ['src/modules', 'src/app.ts', 'src/main.ts', 'src/cli'], message: 'services.ts builds the infrastructure; the modules are wired by app.ts.' },
  // DESIGN §2: modules reach each other through services; a repository is its own module's.
  ...modules.map((name) => ({
    target: `src/modules/${name}/**`,
    from: modules.filter((other) => other !== name).map((other) => `src/modules/${other}/**/*.repository.ts`),
    message: `Reach another module's data through its service (DESIGN §2): ${name}/ may import only its own repositories.`,
  })),
];
/** web/ renders; features build on it, never the reverse. */
const webZone = { target: 'src/web', from: ['src/modules', 'src/http', 'src/deps.ts', ...top], message: 'web/ holds page building blocks: it imports no feature module, no Fastify glue and no services.' };
/**
 * Issue #37 §1: a service that changes state is told who acts, every time: a parameter typed
 * `Acting<…>`, `Actor` or another `…Actor` may have no default value and may not be optional,
 * so the compiler refuses a call without one. The type is read from the annotation (the parameter
 * itself, or a member of its union); a destructured `actor`/`acting` with a default is refused too.
 */
const ACTOR_TYPE = /^(?:Acting|Actor|\w+Actor)$/;
const ACTOR_NAME = /^(?:actor|acting)$/;
/** @param {any} annotation a parameter's TypeScript annotation (its `typeAnnotation` node) */
function namesActor(annotation) {
  const type = annotation?.typeAnnotation;
  if (!type) return false;
  const members = type.type === 'TSUnionType' ? type.types : [type];
  return members.some((t) => t.type === 'TSTypeReference' && ACTOR_TYPE.test(t.typeName.type === 'TSQualifiedName' ? t.typeName.right.name : t.typeName.name));
}
/** @type {import('eslint').Rule.RuleModule} */
const actingRequired = {
  meta: { type: 'problem', schema: [], messages: { required: 'Who acts is never defaulted: take `{{name}}` without a default value and not optional, and have every caller pass it (issue #37 §1).' } },
  create(context) {
    /** @param {any} fn */
    const check = (fn) => {
      for (const param of fn.params) {
        const target = param.type === 'TSParameterProperty' ? param.parameter : param;
        if (target.type === 'AssignmentPattern') {
          if (namesActor(target.left.typeAnnotation)) context.report({ node: target, messageId: 'required', data: { name: target.left.name ?? 'it' } });
          else if (target.left.type === 'ObjectPattern') checkPattern(target.left);
        } else if (target.type === 'Identifier' && target.optional && namesActor(target.typeAnnotation)) {
          context.report({ node: target, messageId: 'required', data: { name: target.name } });
        } else if (target.type === 'ObjectPattern') checkPattern(target);
      }
    };
    /** @param {any} pattern */
    const checkPattern = (pattern) => {
      for (const property of pattern.properties) {
        if (property.type === 'Property' && property.value.type === 'AssignmentPattern' && property.key.type === 'Identifier' && ACTOR_NAME.test(property.key.name)) {
          context.report({ node: property, messageId: 'required', data: { name: property.key.name } });
        }
      }
    };
    return { FunctionDeclaration: check, FunctionExpression: check, ArrowFunctionExpression: check, TSDeclareFunction: check };
  },
};
const gatehouse = { rules: { 'acting-required': actingRequired } };

const importRules = {
  'import-x/no-cycle': ['error', { ignoreExternal: true }],
  'import-x/no-restricted-paths': ['error', { basePath: root, zones: layers }],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'bench/results/**', 'coverage/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/main.ts', 'src/cli/**'],
    rules: {
      'no-restricted-syntax': ['error', { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Only main.ts and cli/ read process.env (DESIGN §2).' }],
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [fastify, kyselyValues, { group: ['../*', '!../core/*'], message: 'core/ imports nothing from src/ (DESIGN §2).' }] }],
    },
  },
  {
    files: ['src/modules/**/*.ts'],
    ignores: ['src/modules/**/*.routes.ts', 'src/modules/**/*.hook.ts', 'src/modules/**/*.repository.ts', 'src/modules/**/*.table.ts', 'src/modules/**/*.schemas.ts', 'src/modules/**/*.service.ts', 'src/modules/**/*.page.ts', 'src/modules/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [fastify, kyselyValues] }] },
  },
  { files: ['src/modules/**/*.service.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [fastify, kysely] }] } },
  {
    // Issue #37 §4: a repository function chooses its database's strategy inside; a service never
    // asks which database or cache it runs on (deps.dialect, deps.coherence, destructured or not).
    files: ['src/modules/**/*.service.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Only main.ts and cli/ read process.env (DESIGN §2).' },
        { selector: 'MemberExpression[property.name=/^(dialect|coherence)$/]', message: 'Services do not branch on the database: the repository function chooses its strategy (issue #37 §4, docs/architecture.md).' },
        { selector: 'ObjectPattern > Property[key.name=/^(dialect|coherence)$/]', message: 'Services do not branch on the database: the repository function chooses its strategy (issue #37 §4, docs/architecture.md).' },
        // Issue #37 §2: live views hear message and access events from the bus, after the change
        // committed (realtime/live-subscriber.ts); a service emits the domain event instead.
        { selector: "CallExpression[callee.property.name='publish'][callee.object.property.name='events']", message: 'Emit the domain event (message.created|updated|deleted, access.changed) with `emitted`/`changing`; live views hear it from the bus (issue #37 §2).' },
        { selector: "CallExpression[callee.property.name='publish'][callee.object.name='events']", message: 'Emit the domain event (message.created|updated|deleted, access.changed) with `emitted`/`changing`; live views hear it from the bus (issue #37 §2).' },
        { selector: "ImportSpecifier[imported.name='announceAccessChange'], CallExpression[callee.name='announceAccessChange']", message: "Emit { type: 'access.changed', topicId } with `emitted`/`changing` instead; live views hear it from the bus (issue #37 §2)." },
      ],
    },
  },
  { files: ['src/modules/**/*.routes.ts', 'src/modules/**/*.hook.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [kyselyValues, repositories] }] } },
  { files: ['src/modules/**/*.page.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [fastify, kyselyValues, repositories, services] }] } },
  { files: ['src/modules/**/*.repository.ts', 'src/modules/**/*.table.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [fastify] }] } },
  { files: ['src/**/*.ts'], plugins: { gatehouse }, rules: { 'gatehouse/acting-required': 'error' } },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
      // Resolves the `.js` specifiers of NodeNext to the `.ts` sources.
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: `${root}/tsconfig.json` })],
    },
    rules: importRules,
  },
  {
    files: ['src/web/**/*.ts'],
    rules: { 'import-x/no-restricted-paths': ['error', { basePath: root, zones: [...layers, webZone] }] },
  },
  {
    // Types only: what the modules receive, without the code that builds it.
    files: ['src/deps.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "ImportDeclaration[importKind!='type']", message: 'deps.ts holds types only (import type).' },
        { selector: ':matches(FunctionDeclaration, ClassDeclaration, VariableDeclaration)', message: 'deps.ts holds types only.' },
        { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Only main.ts and cli/ read process.env (DESIGN §2).' },
      ],
    },
  },
  {
    // The browser scripts (web/assets/): classic scripts with only the browser globals they use.
    files: ['src/web/assets/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { window: 'readonly', document: 'readonly', navigator: 'readonly', setTimeout: 'readonly', EventSource: 'readonly', FileReader: 'readonly' },
    },
    rules: { 'no-undef': 'error', strict: ['error', 'global'] },
  },
);
