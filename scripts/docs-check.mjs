#!/usr/bin/env node
// Docs say what is, comments say why (issue #25 item 7). Run by `npm run docs:check` and by
// `npm run lint`. Fails when
//  - README.md or a page of docs/ names a file or folder under src/, test/ or bench/ that does
//    not exist (also inside code spans and after `../` in links; patterns such as `*`, `<name>`,
//    `{a,b}` or `…` are not checked, nor docs/performance-log.md, the benchmark's history, which
//    names files as they were when measured);
//  - a source file under src/ points to a section (`docs/<page>.md §Section`) that the page does
//    not have, or names a benchmark round (history belongs in commit messages and the log);
//  - a JSON example (a ```json block, or a JSON answer shown as a comment in another code block)
//    does not carry the operation it shows (`<!-- example: GET /api/v1/users/@me 200 -->` on the
//    line before the block, or `… request` for a request body), is not JSON, or is not an API
//    answer yet missing from NOT_API_EXAMPLES (issue #36 §5: examples must not drift).
// test/http/docs-examples.test.ts validates every tagged example against the schema the running
// app documents for that operation (`checkExamples`), unknown names being failures.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

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

/**
 * JSON in the docs that is not an API request or answer: file → the start of the block's first
 * line, and why. Everything else shown as JSON must be tagged with its operation.
 */
const NOT_API_EXAMPLES = [
  { file: 'docs/operations.md', first: '{"level":30,"time":1795257798520', why: 'log lines of start-up' },
  { file: 'docs/operations.md', first: '{"level":30,"time":…,"reqId"', why: 'a log line of a request' },
  { file: 'docs/bots.md', first: '# {"id":"…","client_id":"…"', why: 'the output of gatehouse apps create --json' },
];

const TAG = /^<!--\s*example:\s*(.*?)\s*-->$/;
const TAG_BODY = /^(GET|POST|PUT|PATCH|DELETE)\s+(\/\S*)\s+([1-5]\d\d|request)$/;
/** A JSON answer written as a comment inside a shell or code block: `# {"id":…}`, `# 200 {"id":…}`, `// [{…}]`. */
const COMMENTED_JSON = /^\s*(#|\/\/)\s*(\d{3}\s+)?[[{]\s*["{\]}]/;

/**
 * The JSON examples of a Markdown text: every ```json block, with the tag on the nearest
 * non-blank line before it (`tag` undefined when there is none), and every JSON answer shown as
 * a comment in another code block (never taggable: it belongs in a ```json block of its own).
 */
export function jsonExamples(text) {
  const lines = text.split('\n');
  const examples = [];
  for (let i = 0; i < lines.length; i += 1) {
    const fence = /^\s*```(\w*)/.exec(lines[i]);
    if (!fence) continue;
    const start = i;
    const body = [];
    for (i += 1; i < lines.length && !/^\s*```/.test(lines[i]); i += 1) body.push(lines[i]);
    if (fence[1] === 'json') {
      let before = start - 1;
      while (before >= 0 && lines[before].trim() === '') before -= 1;
      const tag = before >= 0 ? TAG.exec(lines[before].trim())?.[1] : undefined;
      examples.push({ line: start + 1, tag, text: body.join('\n') });
    } else {
      body.forEach((content, offset) => {
        if (COMMENTED_JSON.test(content)) examples.push({ line: start + 2 + offset, commented: true, text: content.trim() });
      });
    }
  }
  return examples;
}

/** An example's tag as an operation: `{ method, path, status }`, status 'request' for a request body. */
export function parseTag(tag) {
  const match = TAG_BODY.exec(tag ?? '');
  return match ? { method: match[1], path: match[2], status: match[3] } : undefined;
}

/**
 * The tagged examples of README.md and docs/ (`{ file, line, operation, value }`) and the
 * findings about the others: untagged, tagged wrongly, not JSON, or shown as a comment.
 */
export function docExamples(dir = root) {
  const examples = [];
  const findings = [];
  for (const file of ['README.md', ...readdirSync(join(dir, 'docs')).filter((n) => n.endsWith('.md')).map((n) => `docs/${n}`)]) {
    if (!existsSync(join(dir, file))) continue;
    for (const example of jsonExamples(readFileSync(join(dir, file), 'utf8'))) {
      const where = `${file}:${example.line}`;
      const firstLine = example.text.split('\n')[0] ?? '';
      if (NOT_API_EXAMPLES.some((allowed) => allowed.file === file && firstLine.trim().startsWith(allowed.first))) continue;
      if (example.commented) {
        findings.push(`${where}: a JSON answer in a comment; show it in a \`\`\`json block tagged <!-- example: METHOD /path STATUS -->`);
        continue;
      }
      if (example.tag === undefined) {
        findings.push(`${where}: a JSON example without <!-- example: METHOD /path STATUS --> before it (or, if it is no API request or answer, an entry in NOT_API_EXAMPLES)`);
        continue;
      }
      const operation = parseTag(example.tag);
      if (!operation) {
        findings.push(`${where}: the tag "${example.tag}" is not METHOD /path STATUS (or METHOD /path request)`);
        continue;
      }
      let value;
      try {
        value = JSON.parse(example.text);
      } catch (error) {
        findings.push(`${where}: not JSON (${error.message}); write "…" inside strings for what is left out`);
        continue;
      }
      examples.push({ file, line: example.line, operation, value });
    }
  }
  return { examples, findings };
}

/** Where "…" stands for a left-out part of a string, any string is allowed, whatever pattern or format the field has. */
const PLACEHOLDER = { type: 'string', pattern: '…' };

/**
 * The schema an example is held to: every object that lists its properties admits no other name
 * (additionalProperties false: a misspelt or invented field fails), and a string with "…" in it
 * passes a pattern or format.
 */
export function strictSchema(schema) {
  if (Array.isArray(schema)) return schema.map(strictSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy = {};
  for (const [key, value] of Object.entries(schema)) {
    copy[key] = key === 'properties' ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, strictSchema(sub)])) : strictSchema(value);
  }
  if (copy.properties && typeof copy.properties === 'object') copy.additionalProperties = false;
  if (typeof copy.pattern === 'string' || typeof copy.format === 'string') return { anyOf: [copy, PLACEHOLDER] };
  return copy;
}

/** The schema an OpenAPI document gives an operation's answer with `status` (or its request body). */
function operationSchema(openapi, { method, path, status }) {
  const operation = openapi.paths?.[path]?.[method.toLowerCase()];
  if (!operation) return { error: `the API has no ${method} ${path}` };
  const content = status === 'request' ? operation.requestBody?.content : operation.responses?.[status]?.content;
  if (!content) return { error: status === 'request' ? `${method} ${path} takes no request body` : `${method} ${path} documents no ${status} answer with a body` };
  const schema = (content['application/json'] ?? Object.values(content)[0])?.schema;
  return schema ? { schema } : { error: `${method} ${path} ${status} has no schema` };
}

function describeError(error) {
  const at = error.instancePath || '(top)';
  if (error.keyword === 'additionalProperties') return `${at}: unknown name "${error.params.additionalProperty}"`;
  if (error.keyword === 'required') return `${at}: missing "${error.params.missingProperty}"`;
  return `${at}: ${error.message}`;
}

/**
 * Checks tagged examples (docExamples) against the OpenAPI document the app serves; returns one
 * finding per failing example, naming each unknown or missing name.
 */
export function checkExamples(openapi, examples) {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const findings = [];
  for (const { file, line, operation, value } of examples) {
    const label = `${file}:${line}: ${operation.method} ${operation.path} ${operation.status}`;
    const found = operationSchema(openapi, operation);
    if (found.error) {
      findings.push(`${label}: ${found.error}`);
      continue;
    }
    const validate = ajv.compile(strictSchema(found.schema));
    if (validate(value)) continue;
    // The branches of anyOf repeat what their members said; the names are what a reader fixes.
    const errors = [...new Set((validate.errors ?? []).filter((e) => e.keyword !== 'anyOf').map(describeError))];
    findings.push(`${label}: ${errors.join('; ')}`);
  }
  return findings;
}

if (process.argv[1] && relative(process.argv[1], fileURLToPath(import.meta.url)) === '') {
  const missing = missingPaths();
  const findings = sourceFindings();
  const examples = docExamples().findings;
  const errors = [...findings, ...examples.map((message) => ({ message }))];
  if (missing.length > 0 || errors.length > 0) {
    if (missing.length > 0) process.stderr.write(`docs:check: ${missing.length} path(s) named in the docs do not exist:\n${missing.map((m) => `  ${m}`).join('\n')}\n`);
    if (errors.length > 0) process.stderr.write(`docs:check: ${errors.length} comment(s) in src/ or JSON example(s) in the docs to fix:\n${errors.map((e) => `  ${e.message}`).join('\n')}\n`);
    process.exit(1);
  }
  process.stdout.write(`docs:check: every src/, test/ and bench/ path named in ${documents().length} documents exists; src/ points only to sections that exist; every JSON example names its operation\n`);
}
