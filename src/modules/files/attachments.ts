/**
 * What: the pure rules of files (issue #42): an attachment's record and wire shape (Discord's
 * attachment object), file names made safe, which types are shown inline, the signed expiring
 * URLs (Discord's `ex`/`is`/`hm`), and HTTP byte ranges.
 * Invariant: only PNG, JPEG, GIF and WebP recognised from the file's own header bytes are ever
 * shown inline (DESIGN §4: never active content); a declared type alone never makes a file inline.
 * Tested: test/http/attachments.test.ts.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { sealingKey } from '../../core/sealed.js';

/** A stored file of a message (the `attachments` row). */
export interface Attachment {
  id: string;
  messageId: string;
  channelId: string;
  filename: string;
  size: number;
  contentType: string | null;
  /** Set only for a PNG, JPEG, GIF or WebP image recognised from its header bytes. */
  width: number | null;
  height: number | null;
  description: string | null;
  storageKey: string;
  createdAt: number;
}

/** Discord's attachment object. */
export interface AttachmentResource {
  id: string;
  filename: string;
  size: number;
  url: string;
  proxy_url: string;
  content_type?: string;
  width?: number;
  height?: number;
  description?: string;
}

/** Discord's limits: 10 files a message; descriptions (alt text) up to 1024 characters. */
export const MAX_FILES = 10;
export const DESCRIPTION_MAX = 1024;
/** The longest file name kept (most filesystems' limit, in UTF-8 bytes, is 255). */
export const FILENAME_MAX = 200;

/** The raster types shown inline, by the type image-size recognises in the header bytes. */
const INLINE_TYPES: Readonly<Record<string, string>> = { png: 'image/png', jpg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

/** The MIME type to serve `type` (image-size's name) inline as, or undefined when it is not one we show inline. */
export function inlineImageType(detected: string | undefined): string | undefined {
  return detected === undefined ? undefined : INLINE_TYPES[detected];
}

/** Whether a stored attachment is an image we show inline (its dimensions were read from its bytes). */
export function isInlineImage(a: Pick<Attachment, 'width' | 'height' | 'contentType'>): boolean {
  return a.width !== null && a.height !== null && a.contentType !== null && Object.values(INLINE_TYPES).includes(a.contentType);
}

/**
 * A file name safe in a URL path, an HTTP header and a page: the last path segment, NFC, every
 * character but letters, digits, `.`, `-` and `_` turned into `_` (as Discord turns spaces), no
 * leading dot, at most FILENAME_MAX characters with the extension kept; `file` when nothing is left.
 */
export function sanitizeFilename(raw: string): string {
  const base = raw.normalize('NFC').split(/[/\\]/).pop() ?? '';
  let name = base.replace(/[^\p{L}\p{N}._-]/gu, '_').replace(/^\.+/, '');
  if ([...name].length > FILENAME_MAX) {
    const dot = name.lastIndexOf('.');
    const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
    name = [...name].slice(0, FILENAME_MAX - ext.length).join('') + ext;
  }
  return name.replace(/_+/g, '_') === '_' || name === '' ? 'file' : name;
}

/** A declared MIME type kept only when it is a plain `type/subtype` (parameters dropped), lowercased. */
export function sanitizeContentType(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const type = raw.split(';')[0]?.trim().toLowerCase() ?? '';
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(type) ? type : null;
}

// --- Signed URLs ---------------------------------------------------------------------------------

/** Discord's attachment links last a day; ours too. */
export const URL_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** `is` is rounded down to the hour, so a URL stays the same (and cacheable) for an hour. */
const ISSUE_STEP_MS = 60 * 60 * 1000;

export interface UrlSignature {
  /** Expiry, Unix seconds in hex (Discord's `ex`). */
  ex: string;
  /** Issue time, Unix seconds in hex (Discord's `is`). */
  is: string;
  /** HMAC-SHA256 in hex (Discord's `hm`). */
  hm: string;
}

function mac(secret: string, channelId: string, attachmentId: string, ex: string, is: string): Buffer {
  // A key of its own, derived from the server secret (core/sealed.ts keeps uses apart).
  return createHmac('sha256', sealingKey(secret, 'gatehouse attachment url')).update(`${channelId}/${attachmentId}/${ex}/${is}`).digest();
}

export function signAttachment(secret: string, channelId: string, attachmentId: string, now: number): UrlSignature {
  const issued = Math.floor(now / ISSUE_STEP_MS) * ISSUE_STEP_MS;
  const is = Math.floor(issued / 1000).toString(16);
  const ex = Math.floor((issued + URL_LIFETIME_MS) / 1000).toString(16);
  return { ex, is, hm: mac(secret, channelId, attachmentId, ex, is).toString('hex') };
}

/**
 * Whether `ex`/`is`/`hm` were signed for this attachment by one of `secrets` (rotation: every
 * accepted secret) and have not expired at `now`. Compared in constant time (DESIGN §3).
 */
export function verifyAttachment(secrets: readonly string[], channelId: string, attachmentId: string, query: Partial<Record<'ex' | 'is' | 'hm', unknown>>, now: number): boolean {
  const { ex, is, hm } = query;
  if (typeof ex !== 'string' || typeof is !== 'string' || typeof hm !== 'string') return false;
  if (!/^[0-9a-f]{1,12}$/.test(ex) || !/^[0-9a-f]{1,12}$/.test(is) || !/^[0-9a-f]{64}$/.test(hm)) return false;
  if (parseInt(ex, 16) * 1000 <= now) return false;
  const given = Buffer.from(hm, 'hex');
  return secrets.some((secret) => timingSafeEqual(mac(secret, channelId, attachmentId, ex, is), given));
}

/** The path of a file on our origin: /attachments/{channel_id}/{attachment_id}/{filename}. */
export function attachmentPath(a: Pick<Attachment, 'channelId' | 'id' | 'filename'>): string {
  return `/attachments/${a.channelId}/${a.id}/${encodeURIComponent(a.filename)}`;
}

/** The signed URL of a file, relative to the origin (the channel view) or absolute (the API, with `baseUrl`). */
export function attachmentUrl(a: Pick<Attachment, 'channelId' | 'id' | 'filename'>, signature: UrlSignature, baseUrl = ''): string {
  return `${baseUrl}${attachmentPath(a)}?ex=${signature.ex}&is=${signature.is}&hm=${signature.hm}`;
}

/** A file as the channel view shows it: an inline image (dimensions reserved) or a download card. */
export interface FileView {
  id: string;
  filename: string;
  size: number;
  /** Signed, relative to our origin. */
  url: string;
  image: { width: number; height: number } | null;
  description: string | null;
}

export function presentAttachment(a: Attachment, url: string): AttachmentResource {
  const out: AttachmentResource = { id: a.id, filename: a.filename, size: a.size, url, proxy_url: url };
  if (a.contentType !== null) out.content_type = a.contentType;
  if (a.width !== null && a.height !== null) {
    out.width = a.width;
    out.height = a.height;
  }
  if (a.description !== null) out.description = a.description;
  return out;
}

// --- Serving -----------------------------------------------------------------------------------

/**
 * RFC 9110 §14.2: one `bytes=` range of a file of `size` bytes. Undefined: serve the whole file
 * (no header, a unit we do not know, or several ranges); 'unsatisfiable': answer 416.
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return undefined;
  const [, from = '', to = ''] = match;
  if (from === '' && to === '') return undefined;
  if (from === '') {
    // A suffix: the last N bytes.
    const n = Number(to);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(from);
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/**
 * RFC 6266 Content-Disposition: `inline` only for the raster images we show; everything else
 * (SVG and HTML included) a download, its name as ASCII and as RFC 8187 UTF-8.
 */
export function contentDisposition(a: Pick<Attachment, 'filename' | 'width' | 'height' | 'contentType'>): string {
  const ascii = a.filename.replace(/[^A-Za-z0-9._-]/g, '_');
  const kind = isInlineImage(a) ? 'inline' : 'attachment';
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(a.filename)}`;
}
