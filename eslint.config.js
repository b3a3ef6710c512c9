// @ts-check
import tseslint from 'typescript-eslint';

/**
 * Lint enforces what it can of DESIGN §2's direction rules; the rest is review.
 *  - core/ imports nothing from the rest of src/ and neither Fastify nor Kysely;
 *  - pure domain files (no role suffix) import neither Fastify nor Kysely;
 *  - routes never touch SQL (no Kysely, no repositories); services never see the request;
 *  - pages render what they are given (no Kysely, no repositories, no services);
 *  - only main.ts and cli/ read process.env.
 */
const fastify = { group: ['fastify', '@fastify/*'], message: 'Only routes and http/ know about Fastify (DESIGN §2).' };
const kysely = { group: ['kysely'], message: 'Only repositories and storage/ import Kysely (DESIGN §2).', allowTypeImports: true };
const kyselyValues = { group: ['kysely'], message: 'Only repositories and storage/ import Kysely (DESIGN §2).' };
const repositories = { group: ['**/*.repository.js'], message: 'Routes and pages reach data through services (DESIGN §2).' };
const services = { group: ['**/*.service.js'], message: 'Pages render what they are given and never query (DESIGN §2).' };

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
  { files: ['src/modules/**/*.routes.ts', 'src/modules/**/*.hook.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [kyselyValues, repositories] }] } },
  { files: ['src/modules/**/*.page.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [fastify, kyselyValues, repositories, services] }] } },
  { files: ['src/modules/**/*.repository.ts', 'src/modules/**/*.table.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [fastify] }] } },
  {
    // The browser scripts (web/assets/): classic scripts with only the browser globals they use.
    files: ['src/web/assets/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { window: 'readonly', document: 'readonly', navigator: 'readonly', setTimeout: 'readonly', EventSource: 'readonly' },
    },
    rules: { 'no-undef': 'error', strict: ['error', 'global'] },
  },
);
