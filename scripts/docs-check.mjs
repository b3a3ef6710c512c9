#!/usr/bin/env node
// Fails when README.md or a page of docs/ names a file or folder under src/, test/ or bench/ that
// does not exist, so the docs describe the tree as it is (issue #25 item 7). Run by `npm run
// docs:check` and by `npm run lint`.
//
// Checked: every `src/…`, `test/…` and `bench/…` path in the text, also inside code spans and
// after `../` in links. Not checked: patterns (`*`, `<name>`, `{a,b}`, `…`), and
// docs/performance-log.md, the benchmark's history, which names files as they were when measured.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const HISTORY = new Set(['docs/performance-log.md']);
const PATH = /(^|\.\.\/|[^\w./-])((?:src|test|bench)\/[\w./@*<>{}…-]*)/g;

/** The Markdown files whose paths must exist. */
export function documents(dir = root) {
  const docs = readdirSync(join(dir, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs].filter((file) => !HISTORY.has(file));
}

/** Every checkable path named in `text`, with its line number. */
export function pathsIn(text) {
  const found = [];
  text.split('\n').forEach((line, index) => {
    for (const match of line.matchAll(PATH)) {
      let path = match[2];
      if (/[*<>{}…]/.test(path)) continue;
      path = path.replace(/[.:]+$/, '');
      found.push({ path, line: index + 1 });
    }
  });
  return found;
}

export function missingPaths(dir = root) {
  const missing = [];
  for (const file of documents(dir)) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const { path, line } of pathsIn(text)) {
      if (!existsSync(join(dir, path))) missing.push(`${file}:${line}: ${path}`);
    }
  }
  return missing;
}

if (process.argv[1] && relative(process.argv[1], fileURLToPath(import.meta.url)) === '') {
  const missing = missingPaths();
  if (missing.length > 0) {
    process.stderr.write(`docs:check: ${missing.length} path(s) named in the docs do not exist:\n${missing.map((m) => `  ${m}`).join('\n')}\n`);
    process.exit(1);
  }
  process.stdout.write(`docs:check: every src/, test/ and bench/ path named in ${documents().length} documents exists\n`);
}
