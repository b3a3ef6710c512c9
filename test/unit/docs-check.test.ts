import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { missingPaths, pathsIn, sourceFindings } from '../../scripts/docs-check.mjs';

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
