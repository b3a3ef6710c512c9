import { describe, expect, it } from 'vitest';
import { contrastRatio, hexColor, readableOn } from '../../src/core/contrast.js';

describe('readable role colours (issue #24)', () => {
  it('computes WCAG contrast ratios', () => {
    expect(contrastRatio(0x000000, 0xffffff)).toBeCloseTo(21, 5);
    expect(contrastRatio(0x777777, 0xffffff)).toBeCloseTo(4.48, 2);
  });

  it('keeps a colour that already reaches 4.5:1, and moves one that does not toward black or white until it does', () => {
    expect(readableOn(0x1b5e20, 0xffffff)).toBe(0x1b5e20);
    for (const color of [0xffee00, 0x00ffff, 0xffffff, 0x5865f2, 0x000001, 0x202225]) {
      for (const panel of [0xffffff, 0x1f2227]) {
        const readable = readableOn(color, panel);
        expect(contrastRatio(readable, panel), `${hexColor(color)} on ${hexColor(panel)}`).toBeGreaterThanOrEqual(4.5);
      }
    }
    expect(hexColor(0x00ff)).toBe('#0000ff');
  });
});
