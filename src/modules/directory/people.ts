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
