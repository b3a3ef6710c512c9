import { describe, expect, it } from 'vitest';
import { BodyRefused, FORM_FIELDS_MAX, formFieldCount, jsonNestsDeeperThan, parseForm } from '../../src/http/body-limits.js';

describe('form bodies: linear parsing with a bounded field count (issue #21 §1)', () => {
  it('one field repeated 40,000 times is refused for its field count, before any value is kept', () => {
    const body = Array.from({ length: 40_000 }, () => 'code=x').join('&');
    expect(formFieldCount(body)).toBe(40_000);
    expect(() => parseForm(body)).toThrow(BodyRefused);
    expect(() => parseForm(body)).toThrow(`The form has more than ${FORM_FIELDS_MAX} fields`);
  });

  it(`keeps every value of a repeated name, in order, up to ${FORM_FIELDS_MAX} fields (RFC 6749 §3.2 refuses them later)`, () => {
    const form = parseForm(Array.from({ length: FORM_FIELDS_MAX }, (_, i) => `code=${i}`).join('&'));
    expect(form['code']).toEqual(Array.from({ length: FORM_FIELDS_MAX }, (_, i) => String(i)));
  });

  it('decodes as browsers encode (WHATWG URLSearchParams): + is a space, percent-escapes are UTF-8', () => {
    expect(parseForm('a=x+y&b=%C3%A9%2B&c=&d')).toEqual({ a: 'x y', b: 'é+', c: '', d: '' });
  });

  it('a field named __proto__ or constructor is an ordinary field', () => {
    const form = parseForm('__proto__=x&constructor=y&toString=z');
    expect(Object.getPrototypeOf(form)).toBeNull();
    expect(Object.keys(form)).toEqual(['__proto__', 'constructor', 'toString']);
    expect(form['__proto__']).toBe('x');
  });
});

describe('JSON nesting depth, found in one pass without recursion (issue #21 §1)', () => {
  const bytes = (text: string) => Buffer.from(text);

  it('counts objects and arrays, exactly up to the bound', () => {
    expect(jsonNestsDeeperThan(bytes('[[{"a":[1]}]]'), 4)).toBe(false);
    expect(jsonNestsDeeperThan(bytes('[[{"a":[[1]]}]]'), 4)).toBe(true);
    expect(jsonNestsDeeperThan(bytes('[[],[],[],[],[]]'), 2)).toBe(false);
  });

  it('brackets inside strings, escaped quotes included, do not count', () => {
    expect(jsonNestsDeeperThan(bytes(JSON.stringify({ a: '[[[[{{{{', b: '\\"[[[[' })), 1)).toBe(false);
    expect(jsonNestsDeeperThan(bytes('["\\\\", [[]]]'), 2)).toBe(true);
  });

  it('a million levels are refused as soon as the bound is passed', () => {
    expect(jsonNestsDeeperThan(bytes('['.repeat(1_000_000)), 32)).toBe(true);
  });
});
