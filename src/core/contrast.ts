/**
 * Text colours that stay readable (WCAG 2.x contrast, issue #24: role colours on names must pass the
 * axe check). Colours are 24-bit RGB integers, as roles store them.
 */

/** WCAG's "normal text" minimum (1.4.3 AA). */
export const MIN_TEXT_CONTRAST = 4.5;

function channel(value: number): number {
  const c = value / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/** WCAG relative luminance of a 0xRRGGBB colour. */
export function luminance(color: number): number {
  return 0.2126 * channel((color >> 16) & 0xff) + 0.7152 * channel((color >> 8) & 0xff) + 0.0722 * channel(color & 0xff);
}

/** WCAG contrast ratio of two colours, 1–21. */
export function contrastRatio(a: number, b: number): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

function mix(color: number, toward: number, amount: number): number {
  let out = 0;
  for (const shift of [16, 8, 0]) {
    const from = (color >> shift) & 0xff;
    const to = (toward >> shift) & 0xff;
    out |= Math.round(from + (to - from) * amount) << shift;
  }
  return out;
}

/**
 * `color` itself when it reaches `min` contrast on `background`; otherwise the least mix of it
 * toward black (on a light background) or white (on a dark one) that does, keeping its hue.
 */
export function readableOn(color: number, background: number, min = MIN_TEXT_CONTRAST): number {
  const toward = luminance(background) > 0.18 ? 0x000000 : 0xffffff;
  for (let step = 0; step <= 20; step++) {
    const candidate = mix(color, toward, step / 20);
    if (contrastRatio(candidate, background) >= min) return candidate;
  }
  return toward;
}

/** `#rrggbb` for a 0xRRGGBB colour. */
export function hexColor(color: number): string {
  return `#${color.toString(16).padStart(6, '0')}`;
}
