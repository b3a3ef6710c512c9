import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const OAUTH = join(import.meta.dirname, '../../src/modules/oauth');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}

describe('the OAuth module keeps the database choice in its repositories (issue #37 §3, §4)', () => {
  it('no OAuth service and no grant names deps.dialect or deps.coherence: each repository function chooses its strategy', () => {
    const checked = filesUnder(OAUTH).filter((file) => file.endsWith('.service.ts') || relative(OAUTH, file).startsWith('grants/'));
    expect(checked.length).toBeGreaterThan(5);
    const offenders = checked.filter((file) => /\bdeps\.(dialect|coherence)\b/.test(readFileSync(file, 'utf8'))).map((file) => relative(OAUTH, file));
    expect(offenders).toEqual([]);
  });
});
