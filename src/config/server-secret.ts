import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * The server secret (issue #21 §5): a key that is never stored in the database, so that a copy
 * of the database is not enough to derive live tokens from old ones (token.service.ts
 * successorTokens). GATEHOUSE_SECRET gives it (comma-separated: the first signs, the others are
 * still accepted, for rotation); otherwise it is read from GATEHOUSE_SECRET_FILE, which is
 * created on first start with 256 random bits and mode 0600 — enough for one machine; every
 * instance of a cluster must share one secret (docs/configuration.md).
 */
export function readOrCreateSecretFile(path: string): string {
  const file = resolve(path);
  const existing = readSecret(file);
  if (existing !== undefined) return existing;
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // Written beside, then linked into place: link fails if another process got there first, so two
  // instances starting at once agree on one secret and nobody ever reads a half-written file.
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    chmodSync(temporary, 0o600);
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temporary);
  }
  const created = readSecret(file);
  if (created === undefined) throw new Error(`${file} holds no secret`);
  return created;
}

function readSecret(file: string): string | undefined {
  try {
    const text = readFileSync(file, 'utf8').trim();
    return text === '' ? undefined : text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The server secrets an instance uses, the sealing one first: GATEHOUSE_SECRET's list, or the secret file's one. */
export function serverSecrets(config: { secrets: string[]; secretFile: string }): readonly [string, ...string[]] {
  const [current, ...previous] = config.secrets.length > 0 ? config.secrets : [readOrCreateSecretFile(config.secretFile)];
  return [current as string, ...previous];
}

/**
 * Issue #36 §4: why an instance whose secret is not the database's refuses to start; the same
 * sentence from the server and from every CLI command, naming the setting that fixes it.
 */
export function secretMismatchProblem(config: { secrets: string[]; secretFile: string }): string {
  const which =
    config.secrets.length > 0
      ? 'GATEHOUSE_SECRET does not hold the server secret this database is used with'
      : `GATEHOUSE_SECRET is unset, and the secret in ${config.secretFile} is not the server secret this database is used with (another instance made its own, or the file was replaced)`;
  return (
    `${which}. Set GATEHOUSE_SECRET to the value the other instances use: every instance of a cluster, and the CLI, need the same one ` +
    '(to rotate, list the new one first and the old one after it, comma-separated). If that secret is lost, run "gatehouse secret adopt" with this setting ' +
    'to make the database take it; what was sealed with the old one (invite codes kept for listing, pending one-time reveals) can then no longer be opened'
  );
}
