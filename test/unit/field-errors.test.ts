import { describe, expect, it } from 'vitest';
import { addFieldError } from '../../src/core/errors.js';

describe('error trees built from request paths', () => {
  it('nests each error under its path, in the Invalid Form Body shape', () => {
    const tree = addFieldError(addFieldError({}, ['embeds', 0, 'title'], { code: 'A', message: 'a' }), ['embeds', 0, 'title'], { code: 'B', message: 'b' });
    expect(tree).toEqual({ embeds: { 0: { title: { _errors: [{ code: 'A', message: 'a' }, { code: 'B', message: 'b' }] } } } });
  });

  it('keeps a field named __proto__ or constructor a field: Object.prototype is never touched', () => {
    const tree = addFieldError(addFieldError({}, ['__proto__', 'x'], { code: 'A', message: 'a' }), ['constructor'], { code: 'B', message: 'b' });
    expect(({} as Record<string, unknown>)['_errors']).toBeUndefined();
    expect(({} as Record<string, unknown>)['x']).toBeUndefined();
    expect(JSON.parse(JSON.stringify(tree))).toEqual({ ['__proto__']: { x: { _errors: [{ code: 'A', message: 'a' }] } }, constructor: { _errors: [{ code: 'B', message: 'b' }] } });
  });
});
