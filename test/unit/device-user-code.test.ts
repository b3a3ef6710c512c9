import { describe, expect, it } from 'vitest';
import { displayUserCode, drawUserCode, normaliseUserCode, USER_CODE_ALPHABET } from '../../src/modules/oauth/device.js';

/** RFC 8628 §6.1 (issue #41 §2): the user code's alphabet, shape and normalisation. */
describe('device user codes', () => {
  it('are 8 letters of BCDFGHJKLMNPQRSTVWXZ, shown XXXX-XXXX', () => {
    let n = 0;
    const code = drawUserCode((length) => Buffer.from(Array.from({ length }, () => n++ % 256)));
    expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
    expect(displayUserCode(code)).toBe(`${code.slice(0, 4)}-${code.slice(4)}`);
  });

  it('skip bytes at or above 240, so every letter is equally likely (256 is not a multiple of 20)', () => {
    const bytes = [255, 240, 0, 19, 20, 239, 1, 2, 3, 4];
    const code = drawUserCode((length) => Buffer.from(bytes.splice(0, length)));
    expect(code).toBe([0, 19, 20, 239, 1, 2, 3, 4].map((b) => USER_CODE_ALPHABET[b % 20]).join(''));
  });

  it('are read in any case, with or without the dash or spaces; anything else is no code', () => {
    expect(normaliseUserCode('wdjb-mjht')).toBe('WDJBMJHT');
    expect(normaliseUserCode(' WDJB MJHT ')).toBe('WDJBMJHT');
    expect(normaliseUserCode('WDJBMJHT')).toBe('WDJBMJHT');
    expect(normaliseUserCode('WDJB-MJH')).toBeUndefined();
    expect(normaliseUserCode('AEIO-UBCD')).toBeUndefined();
    expect(normaliseUserCode('WDJB-MJH1')).toBeUndefined();
  });
});
