import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cryptoRandom, type Random } from '../../src/core/random.js';

/**
 * Issue #7 §6 "no secret in logs" and "secrets at rest". Every secret the service issues is
 * `<prefix>_` + base64url(random bytes) (core/secrets.ts), and every random byte comes from
 * `deps.random` (DESIGN §2). So a Random that remembers every buffer it hands out knows every
 * secret, token, code and session the run issued, and a search for those strings in logs or in
 * a database file proves none of them is there.
 *
 * Only buffers of 16 bytes or more are secrets worth searching for (22 base64url characters,
 * 128 bits: no false positive is possible); shorter draws are nonces and jitter.
 */
export const MIN_SECRET_BYTES = 16;
/** A 16-byte buffer is 22 base64url characters; matches are looked up by their first 22. */
export const WINDOW = 22;

/** A Random that records the base64url of every buffer of MIN_SECRET_BYTES or more it returns. */
export class RecordingRandom implements Random {
  readonly issued: string[] = [];

  constructor(
    private readonly inner: Random = cryptoRandom,
    /** Also appended here, one per line, so a scan in another process sees them. */
    private readonly file?: string,
  ) {}

  bytes(length: number): Buffer {
    const buffer = this.inner.bytes(length);
    if (length >= MIN_SECRET_BYTES) {
      const encoded = buffer.toString('base64url');
      this.issued.push(encoded);
      if (this.file) appendFileSync(this.file, `${encoded}\n`);
    }
    return buffer;
  }
}

export interface SecretHit {
  /** Where it was found: a file name, or the label given to scanText. */
  where: string;
  /** What was found (shortened): never a whole secret in the test output. */
  what: string;
}

/**
 * Finds every recorded secret (by any 22-character window of it: a truncated leak counts too)
 * and every password in `text`. Linear in the text: every run of base64url characters is slid
 * over once against a set of windows.
 */
export class SecretIndex {
  private readonly windows = new Set<string>();
  private readonly passwords = new Set<string>();
  size = 0;

  addSecret(encoded: string): void {
    if (encoded.length < WINDOW) return;
    this.size += 1;
    // Every window of the secret, so a leak of any 22 consecutive characters is found.
    for (let i = 0; i + WINDOW <= encoded.length; i += 1) this.windows.add(encoded.slice(i, i + WINDOW));
  }

  /** A full issued secret like `ghat_…`: its random part is what is indexed. */
  addIssued(plain: string): void {
    const underscore = plain.indexOf('_');
    this.addSecret(underscore > 0 && underscore < 8 ? plain.slice(underscore + 1) : plain);
  }

  addPassword(password: string): void {
    this.passwords.add(password);
    this.size += 1;
  }

  scan(text: string, where: string): SecretHit[] {
    const hits: SecretHit[] = [];
    for (const run of text.match(/[A-Za-z0-9_-]{22,}/g) ?? []) {
      for (let i = 0; i + WINDOW <= run.length; i += 1) {
        const window = run.slice(i, i + WINDOW);
        if (this.windows.has(window)) {
          hits.push({ where, what: `secret ${window.slice(0, 6)}…` });
          break;
        }
      }
    }
    for (const password of this.passwords) {
      if (text.includes(password) || text.includes(encodeURIComponent(password)) || text.includes(encodeURIComponent(password).replace(/%20/g, '+'))) {
        hits.push({ where, what: `password ${password.slice(0, 3)}…` });
      }
    }
    return hits;
  }
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The passwords the test suite signs people up with: every string literal of 10 or more
 * characters given to a field named like a password in test/**\/*.ts. Requests never log their
 * bodies (http/logging.ts), so these would only appear if code logged a form or a person.
 */
export function fixturePasswords(root = ROOT): string[] {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        const source = readFileSync(path, 'utf8');
        for (const m of source.matchAll(/(?:password|Password|PASSWORD)\w*['"]?\s*[:=]\s*(['"`])([^'"`\n$]{10,})\1/g)) {
          const value = m[2] as string;
          // Paths and URLs named like a password field are not passwords.
          if (!value.startsWith('/') && !value.includes('://')) found.add(value);
        }
      }
    }
  };
  walk(join(root, 'test'));
  return [...found];
}

export interface LogScanResult {
  logFiles: number;
  logBytes: number;
  logLines: number;
  secrets: number;
  passwords: number;
  hits: SecretHit[];
}

/**
 * Scans a directory written by test/support/app.ts under GATEHOUSE_TEST_LOG_DIR: every
 * `*.log` file (pino output of one test app) against every secret in every `*.secrets` file
 * and every fixture password.
 */
export function scanLogDirectory(dir: string, passwords = fixturePasswords()): LogScanResult {
  const index = new SecretIndex();
  const files = readdirSync(dir);
  let secrets = 0;
  for (const name of files.filter((f) => f.endsWith('.secrets'))) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (line) {
        index.addSecret(line);
        secrets += 1;
      }
    }
  }
  for (const password of passwords) index.addPassword(password);
  const result: LogScanResult = { logFiles: 0, logBytes: 0, logLines: 0, secrets, passwords: passwords.length, hits: [] };
  for (const name of files.filter((f) => f.endsWith('.log'))) {
    const path = join(dir, name);
    const text = readFileSync(path, 'utf8');
    result.logFiles += 1;
    result.logBytes += statSync(path).size;
    result.logLines += text.split('\n').length - 1;
    result.hits.push(...index.scan(text, name));
  }
  return result;
}

/** Where test/support/app.ts writes one test app's log and secrets (undefined when capture is off). */
export function captureTarget(): { log: string; secrets: string } | undefined {
  const dir = process.env['GATEHOUSE_TEST_LOG_DIR'];
  if (!dir) return undefined;
  mkdirSync(dir, { recursive: true });
  const name = `app-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  return { log: join(dir, `${name}.log`), secrets: join(dir, `${name}.secrets`) };
}

/**
 * `npx tsx test/support/secret-recorder.ts <dir>`: the scan after
 * `GATEHOUSE_TEST_LOG_DIR=<dir> npx vitest run --project unit`. Prints what it searched and exits
 * 1 on any hit (or when the directory holds no logs or no secrets: a scan of nothing proves nothing).
 */
function main(argv: string[]): number {
  const dir = argv[0];
  if (!dir || !existsSync(dir)) {
    process.stderr.write('usage: npx tsx test/support/secret-recorder.ts <GATEHOUSE_TEST_LOG_DIR>\n');
    return 2;
  }
  const r = scanLogDirectory(dir);
  process.stdout.write(
    `secret scan of ${relative(process.cwd(), dir) || dir}: ${r.logFiles} log files, ${r.logLines} lines, ${(r.logBytes / 1e6).toFixed(1)} MB; ` +
      `searched for ${r.secrets} issued secrets and ${r.passwords} fixture passwords: ${r.hits.length} found\n`,
  );
  for (const hit of r.hits.slice(0, 50)) process.stdout.write(`  ${hit.where}: ${hit.what}\n`);
  if (r.logFiles === 0 || r.secrets === 0) {
    process.stderr.write('nothing was captured: was GATEHOUSE_TEST_LOG_DIR set for the test run?\n');
    return 1;
  }
  return r.hits.length === 0 ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exit(main(process.argv.slice(2)));
