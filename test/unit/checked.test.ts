import { describe, expect, it } from 'vitest';
import { checkHttpsImageUrl, codePoints } from '../../src/core/checked.js';

describe('shared field checks (core/checked.ts)', () => {
  it('counts Unicode code points: an emoji is one, a combining mark one more', () => {
    expect(codePoints('')).toBe(0);
    expect(codePoints('a')).toBe(1);
    expect(codePoints('😀')).toBe(1);
    expect(codePoints('é')).toBe(1);
    expect(codePoints('e\u0301')).toBe(2);
    expect(codePoints('❤️')).toBe(2);
    expect(codePoints('😀'.repeat(2000))).toBe(2000);
    // A lone surrogate still counts as one code point rather than breaking the count.
    expect(codePoints('\ud83dx')).toBe(2);
  });

  it('image URLs: https only, no credentials, at most the limit, stored parsed; empty means none', () => {
    expect(checkHttpsImageUrl('')).toEqual({ ok: true, value: null });
    expect(checkHttpsImageUrl(undefined)).toEqual({ ok: true, value: null });
    expect(checkHttpsImageUrl(' https://cdn.example/a b.png ')).toEqual({ ok: true, value: 'https://cdn.example/a%20b.png' });
    expect(checkHttpsImageUrl('http://cdn.example/a.png')).toMatchObject({ ok: false, code: 'URL_TYPE_INVALID_SCHEME' });
    expect(checkHttpsImageUrl('javascript:alert(1)')).toMatchObject({ ok: false, code: 'URL_TYPE_INVALID_SCHEME' });
    expect(checkHttpsImageUrl('https://user:pw@cdn.example/a.png')).toMatchObject({ ok: false, code: 'URL_TYPE_INVALID_URL' });
    expect(checkHttpsImageUrl('not a url')).toMatchObject({ ok: false, code: 'URL_TYPE_INVALID_URL' });
    expect(checkHttpsImageUrl(`https://cdn.example/${'a'.repeat(2048)}`)).toMatchObject({ ok: false, code: 'BASE_TYPE_MAX_LENGTH' });
    expect(checkHttpsImageUrl('https://cdn.example/abc', 10)).toMatchObject({ ok: false, code: 'BASE_TYPE_MAX_LENGTH' });
  });
});
