#!/usr/bin/env node
// Docs say what is, comments say why (issue #25 item 7). Run by `npm run docs:check` and by
// `npm run lint`. Fails when
//  - README.md or a page of docs/ names a file or folder under src/, test/ or bench/ that does
//    not exist (also inside code spans and after `../` in links; patterns such as `*`, `<name>`,
//    `{a,b}` or `…` are not checked, nor docs/performance-log.md, the benchmark's history, which
//    names files as they were when measured);
//  - a source file under src/ points to a section (`docs/<page>.md §Section`) that the page does
//    not have, or names a benchmark round (history belongs in commit messages and the log).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
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

const ROUND = /\b(First|Second|Third|Fourth|Fifth|Sixth|Seventh|Eighth|Ninth|Tenth) round\b/;
const SECTION_POINTER = /docs\/([\w-]+\.md)\s+§([^).;,]+)/g;

/** The headings of a Markdown page, without their #s, lower case. */
function headingsOf(dir, page) {
  const file = join(dir, 'docs', page);
  if (!existsSync(file)) return undefined;
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => line.replace(/^#+\s+/, '').trim().toLowerCase());
}

/** The text of a source file with comment markers taken out, so a pointer may wrap. */
function unwrapped(text) {
  return text.replace(/\n\s*(\/\/|\*(?!\/))?/g, ' ');
}

function sourceFiles(dir, folder = 'src') {
  const files = [];
  for (const name of readdirSync(join(dir, folder))) {
    const path = `${folder}/${name}`;
    if (statSync(join(dir, path)).isDirectory()) files.push(...sourceFiles(dir, path));
    else if (path.endsWith('.ts')) files.push(path);
  }
  return files;
}

/** Findings in src/: pointers to sections that do not exist, and comments naming a benchmark round. */
export function sourceFindings(dir = root) {
  const findings = [];
  for (const file of sourceFiles(dir)) {
    const text = readFileSync(join(dir, file), 'utf8');
    text.split('\n').forEach((line, index) => {
      if (ROUND.test(line)) findings.push({ file, message: `${file}:${index + 1}: names a benchmark round: ${line.trim()}` });
    });
    for (const match of unwrapped(text).matchAll(SECTION_POINTER)) {
      const [, page, section] = match;
      const wanted = section.trim().replace(/\s+/g, " ").toLowerCase();
      const headings = headingsOf(dir, page);
      if (!headings?.some((heading) => heading.startsWith(wanted))) {
        findings.push({ file, message: `${file}: docs/${page} has no section "${wanted}"` });
      }
    }
  }
  return findings;
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
  const findings = sourceFindings();
  const errors = findings;
  if (missing.length > 0 || errors.length > 0) {
    if (missing.length > 0) process.stderr.write(`docs:check: ${missing.length} path(s) named in the docs do not exist:\n${missing.map((m) => `  ${m}`).join('\n')}\n`);
    if (errors.length > 0) process.stderr.write(`docs:check: ${errors.length} comment(s) in src/ to fix:\n${errors.map((e) => `  ${e.message}`).join('\n')}\n`);
    process.exit(1);
  }
  process.stdout.write(`docs:check: every src/, test/ and bench/ path named in ${documents().length} documents exists; src/ points only to sections that exist\n`);
}
