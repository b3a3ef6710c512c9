/**
 * Field checks shared by every domain module: a checked value or Discord's field error code with a
 * sentence for people, code-point counting for length limits, and the https image URL rule.
 */

/** A checked value, or the field error (Discord's code and a sentence saying what is wrong). */
export type Checked<T> = { ok: true; value: T } | { ok: false; code: string; message: string };

export function fail<T>(code: string, message: string): Checked<T> {
  return { ok: false, code, message };
}

/**
 * Unicode code points in `s`, what every length limit counts (issue #5: "count Unicode code
 * points"): an emoji or an accented letter is one, a combining mark is one more. Counts without
 * building an array, since this runs on every webhook execute.
 */
export function codePoints(s: string): number {
  if (s.length <= 1) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

export const IMAGE_URL_MAX_LENGTH = 2048;

/**
 * An optional image URL that pages will load (avatars, app icons): https only (the CSP allows only
 * https images), no user name or password, at most 2048 characters. Empty means none. The parsed
 * form is returned: it is what browsers request, with spaces and the like encoded.
 */
export function checkHttpsImageUrl(raw: string | null | undefined, max = IMAGE_URL_MAX_LENGTH): Checked<string | null> {
  const value = (raw ?? '').trim();
  if (value === '') return { ok: true, value: null };
  if (value.length > max) return fail('BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail('URL_TYPE_INVALID_URL', 'Not a well formed URL.');
  }
  if (url.protocol !== 'https:' || url.hostname === '') return fail('URL_TYPE_INVALID_SCHEME', 'Must be an https:// URL.');
  if (url.username !== '' || url.password !== '') return fail('URL_TYPE_INVALID_URL', 'Must not contain a user name or password.');
  if (url.href.length > max) return fail('BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
  return { ok: true, value: url.href };
}
