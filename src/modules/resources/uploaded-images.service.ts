import type { Deps } from '../../deps.js';
import { CHUNK_BYTES } from '../../storage/database-blob-store.js';
import type { ServedImage } from './image-cache.js';
import { checkImageBytes, checkImageData, imageBlobKey, imageTypeOf, parseStoredImage, storedImagePath, UPLOADED_IMAGE_MAX_BYTES, type ImageKind, type StoredImage } from './uploaded-images.js';

/**
 * Uploaded avatars and icons in the blob store (issue #42 §3): the same store as attachments
 * (GATEHOUSE_FILE_STORE), one blob per subject and content (uploaded-images.ts imageBlobKey).
 * Order: the blob is written before the column names it, and the old blob is deleted only after
 * the column no longer does, so a reader never meets a name without its bytes.
 */

/**
 * Checks Discord's image data (`field` names it in a 400 50035) and writes it to the store for
 * `kind`/`id`; answers the value the subject's column takes. Nothing is stored when it is refused.
 */
export async function storeUploadedImage(deps: Deps, field: string, kind: ImageKind, id: string, data: unknown): Promise<string> {
  // A page's file input brings the bytes themselves; the API, Discord's data URI.
  const checked = Buffer.isBuffer(data) ? checkImageBytes(field, data) : checkImageData(field, data);
  const image: StoredImage = { kind, id, hash: checked.hash };
  const key = imageBlobKey(image);
  // The same bytes for the same subject: already there (a key is written once).
  if (!(await blobExists(deps, key))) {
    try {
      await deps.files.put(key, once(checked.bytes));
    } catch (error) {
      // Two requests storing the same image at once: the other one wrote it.
      if (!(await blobExists(deps, key))) throw error;
    }
  }
  return storedImagePath(image);
}

/**
 * After a subject's column changed from `previous` to `current` (and the change is committed):
 * deletes the previous uploaded image's blob, which nothing else uses (its key holds the subject).
 * External URLs and unchanged values are left alone.
 */
export async function releaseUploadedImage(deps: Deps, previous: string | null | undefined, current: string | null | undefined): Promise<void> {
  if (previous !== current) await releaseUploadedImages(deps, [previous]);
}

/**
 * After subjects were deleted (and the deletion is committed): deletes the blobs of the uploaded
 * images their columns named (`values`: avatar_url / icon_url as they were), each its subject's
 * own. External URLs and nulls are skipped.
 */
export async function releaseUploadedImages(deps: Deps, values: readonly (string | null | undefined)[]): Promise<void> {
  const keys = new Set<string>();
  for (const value of values) {
    const image = parseStoredImage(value);
    if (image) keys.add(imageBlobKey(image));
  }
  if (keys.size > 0) await deps.files.delete([...keys]);
}

/** The bytes and type of an uploaded image, or undefined when the store no longer has them. */
export async function loadUploadedImage(deps: Deps, image: StoredImage): Promise<ServedImage | undefined> {
  const key = imageBlobKey(image);
  const parts: Buffer[] = [];
  let total = 0;
  // One chunk-sized window at a time: the database store reads exactly one chunk row per window,
  // and a short window is the end of the file, so the size need not be stored anywhere.
  for (let start = 0; start < UPLOADED_IMAGE_MAX_BYTES; start += CHUNK_BYTES) {
    const stream = await deps.files.read(key, { start, end: start + CHUNK_BYTES - 1 });
    if (stream === undefined) break;
    let got = 0;
    for await (const chunk of stream) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      parts.push(buffer);
      got += buffer.length;
    }
    total += got;
    if (got < CHUNK_BYTES) break;
  }
  if (total === 0) return undefined;
  const body = Buffer.concat(parts, total);
  const type = imageTypeOf(body);
  return type ? { type, body, uploaded: true } : undefined;
}

async function blobExists(deps: Deps, key: string): Promise<boolean> {
  const stream = await deps.files.read(key, { start: 0, end: 0 });
  if (stream === undefined) return false;
  stream.destroy();
  return true;
}

async function* once(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}
