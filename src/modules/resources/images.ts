/**
 * What the CDN routes serve (DESIGN §4: files and images from our origin only, never as active
 * content; issue #36 §4): the four raster types Discord's CDN serves, recognised by their first
 * bytes as well as by the type their server declared, and never SVG or anything else a browser
 * could run. Pure.
 */

export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

const SERVED: readonly string[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] satisfies ImageType[];

/** The type the first bytes show, or undefined for anything that is not one of the four. */
export function sniffImageType(bytes: Uint8Array): ImageType | undefined {
  const starts = (...prefix: number[]) => prefix.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x47, 0x49, 0x46, 0x38) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return 'image/gif';
  // RIFF....WEBP
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return 'image/webp';
  return undefined;
}

/**
 * The type to serve an answer as: its declared media type must be one of the four, and its bytes
 * must be one of them too (the bytes decide when the two differ, as servers often mislabel a JPEG
 * as PNG). Anything else (SVG, HTML, JSON, a declared image whose bytes are not one) is refused.
 */
export function servableImageType(declared: string | undefined, bytes: Uint8Array): ImageType | undefined {
  const media = (declared ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!SERVED.includes(media)) return undefined;
  return sniffImageType(bytes);
}
