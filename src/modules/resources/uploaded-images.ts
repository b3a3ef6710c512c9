import { createHash } from 'node:crypto';
import { imageSize } from 'image-size';
import { invalidField } from '../../core/errors.js';
import type { ImageType } from './images.js';

/**
 * Uploaded avatars and icons (issue #42 §3): Discord's image data (`data:image/png;base64,…`)
 * checked and named by its content. Pure; the blob store is uploaded-images.service.ts's.
 *
 * An uploaded image is stored in the subject's own column (`avatar_url`, `icon_url`) as the path
 * it is served at on our origin, `/{kind}/{id}/{hash}.png`: pages show it as it is, imageHash()
 * reads the hash back out of it, and no https URL a person can type has that shape, so it is
 * never mistaken for an external address.
 */

export type ImageKind = 'avatars' | 'icons' | 'app-icons';

/** Discord's limit for an uploaded avatar or icon: 10 MiB of image, decoded. */
export const UPLOADED_IMAGE_MAX_BYTES = 10 * 1024 * 1024;
/** The request body that carries the largest image as base64 JSON, with room for the other fields. */
export const IMAGE_BODY_LIMIT = Math.ceil((UPLOADED_IMAGE_MAX_BYTES * 4) / 3) + 64 * 1024;

/** image-size's names of the four types Discord takes, with the type served. */
const TYPES: Record<string, ImageType> = { png: 'image/png', jpg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

const DATA_URI = /^data:(image\/(?:png|jpeg|jpg|gif|webp));base64,([A-Za-z0-9+/]*={0,2})$/;
const STORED = /^\/(avatars|icons|app-icons)\/([0-9]{1,20})\/([0-9a-f]{32})\.png$/;

export interface CheckedImage {
  bytes: Buffer;
  type: ImageType;
  /**
   * The first 32 hex digits of the bytes' SHA-256: the shape of Discord's avatar hashes, which the
   * CDN path pattern (cdn.routes.ts) and client libraries expect; 128 bits still name the content.
   */
  hash: string;
}

export interface StoredImage {
  kind: ImageKind;
  id: string;
  hash: string;
}

/**
 * The image in a data URI, or 400 50035 at `field` (nothing is stored): not a base64 data URI of
 * PNG, JPEG, GIF or WebP, bytes that are not that image (image-size reads their header), or more
 * than UPLOADED_IMAGE_MAX_BYTES.
 */
export function checkImageData(field: string, raw: unknown): CheckedImage {
  const refuse = (message: string) => invalidField([field], 'IMAGE_INVALID', message);
  if (typeof raw !== 'string') throw refuse('Invalid image data');
  // Checked before decoding, so an oversized body is refused without a copy of it.
  if (raw.length > IMAGE_BODY_LIMIT) throw invalidField([field], 'BINARY_TYPE_MAX_SIZE', `File cannot be larger than ${UPLOADED_IMAGE_MAX_BYTES / 1024 / 1024} MiB`);
  const match = DATA_URI.exec(raw);
  if (!match) throw refuse('Invalid image data: a data URI of a PNG, JPEG, GIF or WebP image is expected (data:image/png;base64,…)');
  const declared = (match[1] as string) === 'image/jpg' ? 'image/jpeg' : (match[1] as string);
  return checkImageBytes(field, Buffer.from(match[2] as string, 'base64'), declared);
}

/**
 * The image in `bytes` (a page's file input, or a decoded data URI declaring `declared`), or 400
 * 50035 at `field`: empty, over UPLOADED_IMAGE_MAX_BYTES, or not a PNG, JPEG, GIF or WebP (of the
 * declared type) by its header, read with image-size.
 */
export function checkImageBytes(field: string, bytes: Buffer, declared?: string): CheckedImage {
  const refuse = (message: string) => invalidField([field], 'IMAGE_INVALID', message);
  if (bytes.length === 0) throw refuse('Invalid image data');
  if (bytes.length > UPLOADED_IMAGE_MAX_BYTES) throw invalidField([field], 'BINARY_TYPE_MAX_SIZE', `File cannot be larger than ${UPLOADED_IMAGE_MAX_BYTES / 1024 / 1024} MiB`);
  const type = imageTypeOf(bytes);
  // The bytes must be the image the URI says they are (issue #42 §3): a PNG labelled GIF is refused, not relabelled.
  if (type === undefined || (declared !== undefined && type !== declared)) throw refuse('Invalid image data: the bytes are not a PNG, JPEG, GIF or WebP image of the declared type');
  return { bytes, type, hash: createHash('sha256').update(bytes).digest('hex').slice(0, 32) };
}

/** The raster type image-size finds in `bytes` (with its dimensions readable), else undefined. */
export function imageTypeOf(bytes: Uint8Array): ImageType | undefined {
  try {
    const size = imageSize(bytes);
    if (!size.type || !size.width || !size.height) return undefined;
    return TYPES[size.type];
  } catch {
    return undefined;
  }
}

/** The column value of an uploaded image: the path it is served at. */
export function storedImagePath(image: StoredImage): string {
  return `/${image.kind}/${image.id}/${image.hash}.png`;
}

/** The uploaded image a column value names, or undefined for an external URL (or null). */
export function parseStoredImage(value: string | null | undefined): StoredImage | undefined {
  if (!value) return undefined;
  const match = STORED.exec(value);
  return match ? { kind: match[1] as ImageKind, id: match[2] as string, hash: match[3] as string } : undefined;
}

/**
 * The blob store key of an uploaded image. The subject is part of it, so each blob has exactly one
 * user and replacing or removing an image may delete the old blob at once; ids are unique only
 * within a kind (an application and its bot user share one), hence the kind.
 */
export function imageBlobKey(image: StoredImage): string {
  return `${image.kind}-${image.id}-${image.hash}`;
}
