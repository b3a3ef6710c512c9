import { describe, expect, it } from 'vitest';
import { findForbiddenText, hasForbiddenControl } from '../../src/core/text.js';

describe('issue #21 §5: the text rule', () => {
  it('refuses C0 controls but tab, LF and CR, DEL and C1 controls; nothing else', () => {
    for (const c of ['\u0000', '\u0001', '\u0008', '\u000b', '\u000c', '\u001f', '\u007f', '\u0085', '\u009f']) expect(hasForbiddenControl(`a${c}b`)).toBe(true);
    for (const text of ['tab\there', 'lines\r\n', 'émoji 🎉', '\u00a0', '\u200b', '']) expect(hasForbiddenControl(text)).toBe(false);
  });

  it('names every offending field of a nested value, keys included', () => {
    expect(findForbiddenText({ content: 'a\u0000', embeds: [{ title: 'ok', fields: [{ name: '\u0007' }] }], ['k\u0000']: 'v', n: 1, b: null })).toEqual(
      expect.arrayContaining([['content'], ['embeds', 0, 'fields', 0, 'name'], ['k\u0000']]),
    );
    expect(findForbiddenText({ fine: ['a', { b: 'c' }] })).toEqual([]);
    expect(findForbiddenText('top\u0000')).toEqual([[]]);
  });

  it('walks a 200,000-deep nesting without exhausting the stack, and finds the string at the bottom', () => {
    let deep: unknown = 'bottom\u0000';
    for (let i = 0; i < 200_000; i += 1) deep = [deep];
    const found = findForbiddenText(deep);
    expect(found).toHaveLength(1);
    expect(found[0]).toHaveLength(200_000);
  });
});
