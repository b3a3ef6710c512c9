import { checkHttpsImageUrl, codePoints, fail, type Checked } from '../../core/checked.js';
import { COMMON_PASSWORDS_TEXT } from '../../core/common-passwords.js';
import { actorNameProblem } from '../../core/names.js';
/** A person (or a bot account) as the domain sees it. */
export interface Person {
  id: string;
  username: string;
  name: string;
  email: string | null;
  emailVerified: boolean;
  avatarUrl: string | null;
  bot: boolean;
  applicationId: string | null;
  createdAt: number;
  /** Issue #39: an instance administrator. */
  admin: boolean;
  /** Issue #39: when the operator disabled the account (it signs in to nothing), or null. */
  disabledAt: number | null;
  /**
   * Issue #38 §4: a TOTP authenticator or a passkey is set up (Discord's mfa_enabled); never for a
   * bot. Read from the row; absent on a Person built in memory before its row exists (sign-up), which has none.
   */
  mfaEnabled?: boolean;
}

/**
 * Usernames: 2–32 characters of lowercase or uppercase ASCII letters, digits, '_' and '.',
 * no leading/trailing '.', no '..' (Discord's new-username rules, minus its restrictions on case).
 * Unique ignoring case.
 */
export const USERNAME_PATTERN = /^(?!\.)(?!.*\.\.)(?!.*\.$)[A-Za-z0-9_.]{2,32}$/;
export const PASSWORD_MIN_LENGTH = 8;
/** Longer than any sane passphrase, short enough that scrypt cannot be made to hash megabytes. */
export const PASSWORD_MAX_LENGTH = 256;
export const DISPLAY_NAME_MAX_LENGTH = 32;

export function usernameKey(username: string): string {
  return username.toLowerCase();
}

export const USERNAME_MIN_LENGTH = 2;
export const USERNAME_MAX_LENGTH = 32;
/** RFC 5321 §4.5.3.1.3: a path is at most 256 octets including the angle brackets, so 254 for the address. */
export const EMAIL_MAX_LENGTH = 254;
export const AVATAR_URL_MAX_LENGTH = 2048;


// C0/C1 controls, line and paragraph separators, bidi overrides and zero-width characters:
// invisible in pages, and the usual tools for faking one name with another.
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]/;

/**
 * A username per USERNAME_PATTERN, with surrounding whitespace removed, that does not pass for
 * the service (issue #21 §4: people read it as who is speaking; core/names.ts).
 */
export function checkUsername(raw: string, serviceName: string): Checked<string> {
  const value = raw.trim();
  if (value === '') return fail('BASE_TYPE_REQUIRED', 'Choose a username.');
  const length = codePoints(value);
  if (length < USERNAME_MIN_LENGTH || length > USERNAME_MAX_LENGTH) {
    return fail('BASE_TYPE_BAD_LENGTH', `Must be between ${USERNAME_MIN_LENGTH} and ${USERNAME_MAX_LENGTH} characters long.`);
  }
  if (!USERNAME_PATTERN.test(value)) {
    return fail('USERNAME_INVALID_CHARACTERS', 'Use only letters A–Z, digits, underscores (_) and periods (.), with no period at the start or end and no two periods in a row.');
  }
  const problem = actorNameProblem(value, serviceName);
  if (problem !== undefined) return fail('USERNAME_INVALID', `${problem.message}.`);
  return { ok: true, value };
}

/**
 * A display name of 1–32 characters after trimming; empty means "use the username". Issue #21 §4:
 * no invisible or text-direction character, and not one that passes for the service (people
 * read it as who is speaking; core/names.ts).
 */
export function checkDisplayName(raw: string, fallback: string, serviceName: string): Checked<string> {
  const value = raw.trim();
  if (value === '') return { ok: true, value: fallback };
  if (codePoints(value) > DISPLAY_NAME_MAX_LENGTH) return fail('BASE_TYPE_BAD_LENGTH', `Must be between 1 and ${DISPLAY_NAME_MAX_LENGTH} characters long.`);
  const problem = actorNameProblem(value, serviceName);
  if (problem?.kind === 'invisible') return fail('BASE_TYPE_INVALID', problem.message);
  if (problem !== undefined) return fail('USERNAME_INVALID', `${problem.message}.`);
  return { ok: true, value };
}

/** An optional e-mail address: empty means none. Checks the shape only; nothing is sent to it. */
export function checkEmail(raw: string | null | undefined): Checked<string | null> {
  const value = (raw ?? '').trim();
  if (value === '') return { ok: true, value: null };
  if (value.length > EMAIL_MAX_LENGTH) return fail('BASE_TYPE_MAX_LENGTH', `Must be ${EMAIL_MAX_LENGTH} or fewer in length.`);
  if (!/^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:".]{2,}$/.test(value) || INVISIBLE.test(value)) {
    return fail('EMAIL_TYPE_INVALID_EMAIL', 'Not a well formed email address.');
  }
  return { ok: true, value };
}

/**
 * A new password: 8–256 characters, taken exactly as typed (never trimmed), and not one an
 * attacker tries first (NIST SP 800-63B §5.1.1.2, issue #21 §5): not blank, not one character
 * repeated, not among the 10,000 most common passwords (core/common-passwords.ts, compared
 * ignoring case). No other composition rule: §5.1.1.2 advises against them.
 */
export function checkPassword(raw: string): Checked<string> {
  const length = codePoints(raw);
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    return fail('BASE_TYPE_BAD_LENGTH', `Must be between ${PASSWORD_MIN_LENGTH} and ${PASSWORD_MAX_LENGTH} characters long.`);
  }
  if (/^\s*$/u.test(raw)) return fail('PASSWORD_BLANK', 'Must not be only spaces.');
  if (/^(.)\1*$/su.test(raw)) return fail('PASSWORD_TOO_COMMON', 'Must not be one character repeated: it is among the first passwords attackers try.');
  if (isCommonPassword(raw)) return fail('PASSWORD_TOO_COMMON', 'This is one of the most common passwords, which attackers try first. Choose another one.');
  return { ok: true, value: raw };
}

let commonPasswords: Set<string> | undefined;

/** Whether `password`, ignoring case, is on the bundled list; the set is built on first use. */
export function isCommonPassword(password: string): boolean {
  commonPasswords ??= new Set(COMMON_PASSWORDS_TEXT.split('\n'));
  return commonPasswords.has(password.toLowerCase());
}

/** An optional avatar URL: the https image rule of core/checked.ts. Empty means none. */
export function checkAvatarUrl(raw: string | null | undefined): Checked<string | null> {
  return checkHttpsImageUrl(raw, AVATAR_URL_MAX_LENGTH);
}
