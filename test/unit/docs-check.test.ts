import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkExamples, docExamples, missingPaths, pathsIn, sourceFindings } from '../../scripts/docs-check.mjs';

let dir: string | undefined;
function tree(files: Record<string, string>): string {
  dir = mkdtempSync(join(tmpdir(), 'docs-check-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('npm run docs:check (issue #25 item 7: docs name only what exists)', () => {
  it('finds src/, test/ and bench/ paths in prose, code spans and ../ links, and skips patterns', () => {
    const text = 'See `src/http/metrics.ts`, [report](../bench/REPORT.md) and test/unit/x.test.ts.\nNot src/modules/*/ nor bench/results/<timestamp>.json; not mysrc/a.ts.';
    expect(pathsIn(text).map((p) => p.path)).toEqual(['src/http/metrics.ts', 'bench/REPORT.md', 'test/unit/x.test.ts']);
  });

  it('reports a path named in README.md or docs/ that does not exist, and not the history page', () => {
    const root = tree({
      'README.md': 'Code in src/a.ts and src/gone.ts.',
      'docs/page.md': 'Tested by test/b.test.ts.',
      'docs/performance-log.md': 'Measured with src/old.ts.',
      'src/a.ts': '',
    });
    expect(missingPaths(root)).toEqual(['README.md:1: src/gone.ts', 'docs/page.md:1: test/b.test.ts']);
  });

  it('reports a comment in src/ that points to a missing section or names a benchmark round', () => {
    const root = tree({
      'README.md': '',
      'docs/performance.md': '# Performance\n\n## Row cache\n',
      'src/ok.ts': '// Kept until a write (docs/performance.md\n// §Row cache).\n',
      'src/bad.ts': '/**\n * Faster since the Tenth round (docs/performance.md §Rounds).\n */\n',
    });
    expect(sourceFindings(root).map((f) => f.message)).toEqual([
      'src/bad.ts:2: names a benchmark round: * Faster since the Tenth round (docs/performance.md §Rounds).',
      'src/bad.ts: docs/performance.md has no section "rounds"',
    ]);
  });
});

/** A one-operation OpenAPI document: GET /api/v1/users/@me answers {id (digits), username, avatar_url?}. */
const OPENAPI = {
  paths: {
    '/api/v1/users/@me': {
      get: {
        responses: {
          '200': {
            content: {
              'application/json': {
                schema: { type: 'object', required: ['id', 'username'], properties: { id: { type: 'string', pattern: '^[0-9]+$' }, username: { type: 'string' }, avatar_url: { anyOf: [{ type: 'string' }, { type: 'null' }] } } },
              },
            },
          },
        },
      },
    },
  },
};

describe('JSON examples in the docs (issue #36 §5: an example names its operation and matches its schema)', () => {
  const tagged = (json: string, tag = 'GET /api/v1/users/@me 200') => `Intro.\n\n<!-- example: ${tag} -->\n\`\`\`json\n${json}\n\`\`\`\n`;

  it('lists a JSON block without a tag, a JSON answer written as a shell comment, a malformed tag and invalid JSON', () => {
    const root = tree({
      'README.md': '',
      'docs/a.md': 'Untagged:\n\n```json\n{ "id": "1" }\n```\n\n```sh\ncurl -s "$BASE/api/v1/users/@me"\n# {"id":"1","name":"Alice"}\n# 200 {"id":"1"}\n```\n',
      'docs/b.md': tagged('{ "id": "1" }', 'the user') + tagged('{ "id": … }'),
      'docs/operations.md': '```json\n{"level":30,"time":1795257798520,"msg":"database migrated"}\n```\n',
    });
    const { examples, findings } = docExamples(root);
    expect(examples).toEqual([]);
    expect(findings.map((f) => f.replace(/: .*/, ''))).toEqual(['docs/a.md:3', 'docs/a.md:9', 'docs/a.md:10', 'docs/b.md:4', 'docs/b.md:10']);
    expect(findings[0]).toContain('without <!-- example:');
    expect(findings[1]).toContain('a JSON answer in a comment');
    expect(findings[3]).toContain('is not METHOD /path STATUS');
    expect(findings[4]).toContain('not JSON');
  });

  it('passes an example that matches its schema, with "…" standing for part of a string', () => {
    const root = tree({ 'README.md': '', 'docs/a.md': tagged('{ "id": "1316…", "username": "alice", "avatar_url": null }') });
    const { examples, findings } = docExamples(root);
    expect(findings).toEqual([]);
    expect(examples).toHaveLength(1);
    expect(checkExamples(OPENAPI, examples)).toEqual([]);
  });

  it('fails an example with a name the schema does not list, one without a required name, a wrong type, or an operation the API lacks', () => {
    const root = tree({
      'README.md': '',
      'docs/a.md': [
        tagged('{ "id": "1", "username": "alice", "avatarUrl": null }'),
        tagged('{ "id": "1" }'),
        tagged('{ "id": 1, "username": "alice" }'),
        tagged('{ "id": "1", "username": "alice" }', 'GET /api/v1/users/@you 200'),
        tagged('{ "id": "1", "username": "alice" }', 'GET /api/v1/users/@me 404'),
      ].join(''),
    });
    expect(checkExamples(OPENAPI, docExamples(root).examples)).toEqual([
      'docs/a.md:4: GET /api/v1/users/@me 200: (top): unknown name "avatarUrl"',
      'docs/a.md:10: GET /api/v1/users/@me 200: (top): missing "username"',
      'docs/a.md:16: GET /api/v1/users/@me 200: /id: must be string',
      'docs/a.md:22: GET /api/v1/users/@you 200: the API has no GET /api/v1/users/@you',
      'docs/a.md:28: GET /api/v1/users/@me 404: GET /api/v1/users/@me documents no 404 answer with a body',
    ]);
  });
});
