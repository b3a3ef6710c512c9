/**
 * Why a single-use link (issue #38 §2–§3: e-mail verification, password reset) is refused; the
 * page says which in words (unknown, expired, used, or for another account than the one signed in).
 */
export type LinkRefusal = 'unknown' | 'expired' | 'used' | 'foreign';

export class LinkRefusedError extends Error {
  constructor(readonly why: LinkRefusal) {
    super(`link refused: ${why}`);
  }
}
