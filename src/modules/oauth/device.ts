import { MINUTE } from '../../core/clock.js';

/**
 * The device authorization grant's pure rules (RFC 8628; issue #41 §2): the user code's alphabet,
 * shape and normalisation, and the lifetimes the device is told.
 */

/** RFC 8628 §3.2 expires_in: a device code and its user code live 10 minutes. */
export const DEVICE_CODE_LIFETIME_MS = 10 * MINUTE;
/** RFC 8628 §3.2 interval: the device polls no faster than every 5 seconds. */
export const DEVICE_POLL_INTERVAL_S = 5;
/** RFC 8628 §3.5: slow_down adds 5 seconds to the interval, for this and every later request. */
export const SLOW_DOWN_STEP_S = 5;

/**
 * RFC 8628 §6.1: consonants only (no vowels, so no words; no look-alikes such as I/1, O/0): 20
 * letters, 8 of them, 20^8 ≈ 2^34.6 codes — guessing is throttled on /activate besides.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;

/** A fresh user code from the injected randomness, as stored and compared: 8 letters, no dash. */
export function drawUserCode(bytes: (n: number) => Buffer): string {
  let code = '';
  // Rejection sampling keeps every letter equally likely: 256 is not a multiple of 20.
  const limit = 256 - (256 % USER_CODE_ALPHABET.length);
  while (code.length < USER_CODE_LENGTH) {
    for (const byte of bytes(USER_CODE_LENGTH * 2)) {
      if (byte < limit && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[byte % USER_CODE_ALPHABET.length];
    }
  }
  return code;
}

/** RFC 8628 §6.1: shown as XXXX-XXXX, easier to read and type. */
export function displayUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What the person typed, as stored (RFC 8628 §6.1: case, dashes and spaces do not matter), or
 * undefined when it cannot be a user code at all.
 */
export function normaliseUserCode(typed: string): string | undefined {
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== USER_CODE_LENGTH) return undefined;
  for (const letter of code) if (!USER_CODE_ALPHABET.includes(letter)) return undefined;
  return code;
}
