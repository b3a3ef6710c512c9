/**
 * What: files of messages (issue #42): receiving an upload (each file streamed into the blob
 * store as it arrives, under the per-message limit), applying the payload's `attachments`
 * metadata, presenting files with fresh signed URLs, serving them, and removing them with their
 * messages.
 * Invariant: a file's row is written before its bytes and both before its message, so a request
 * that fails at any point either removes what it wrote (discardFiles) or, if the process itself
 * died, leaves rows without a message that the maintenance job's sweep removes with their bytes
 * (storage/maintenance.ts sweepOrphanFiles). Nothing is stored for a request answered with an error.
 * Tested: test/http/attachments.test.ts, test/e2e/attachments-clients.test.ts.
 */
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { imageSize } from 'image-size';
import { ApiError, ApiErrors, addFieldError, type ErrorTree } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { jsonNestsDeeperThan, JSON_DEPTH_MAX } from '../../http/body-limits.js';
import { NON_DOCUMENT_CSP } from '../../http/security-headers.js';
import {
  attachmentUrl,
  contentDisposition,
  DESCRIPTION_MAX,
  inlineImageType,
  isInlineImage,
  MAX_FILES,
  parseRange,
  presentAttachment,
  sanitizeContentType,
  sanitizeFilename,
  signAttachment,
  verifyAttachment,
  type Attachment,
  type AttachmentResource,
  type FileView,
} from './attachments.js';
import { deleteAttachmentRows, findAttachment, insertAttachment, listAttachmentsOf, updateAttachment } from './attachments.repository.js';
import { fileIndexOf, type Upload } from './uploads.js';

export type { Upload } from './uploads.js';
export type { Attachment, AttachmentResource, FileView } from './attachments.js';

/** Bytes kept from the start of each file to read an image's dimensions (a JPEG's frame header may follow 64 KiB of EXIF). */
const HEAD_BYTES = 128 * 1024;

/** Where a message's files go: the message they will belong to. */
export interface UploadTarget {
  messageId: string;
  channelId: string;
}

/** An upload read and stored: the payload (payload_json, or the plain form fields) and the new files by `files[n]` index. */
export interface ReceivedUpload {
  body: unknown;
  files: Map<number, Attachment>;
}

/** Discord's 50035 for more than 10 files. */
export function tooManyFiles(): ApiError {
  return ApiErrors.invalidFormBody(addFieldError({}, ['attachments'], { code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${MAX_FILES} or fewer in length.` }));
}

/** Width and height of a PNG, JPEG, GIF or WebP read from its first bytes; undefined for anything else (SVG included). */
function rasterImage(head: Buffer): { type: string; width: number; height: number } | undefined {
  try {
    const found = imageSize(head);
    const type = inlineImageType(found.type);
    if (type === undefined || !found.width || !found.height) return undefined;
    return { type, width: found.width, height: found.height };
  } catch {
    return undefined;
  }
}

/**
 * Reads a multipart upload (issue #42 §2): every file is written to the blob store as it
 * streams in, its row first; more than GATEHOUSE_ATTACHMENT_MAX_BYTES in all is 413 (40005), an
 * 11th file 400 (50035); `payload_json` is the payload (else the plain fields are). On any error
 * everything this upload stored is removed before the error goes on.
 */
export async function receiveUpload(deps: Deps, upload: Upload, target: UploadTarget): Promise<ReceivedUpload> {
  const files = new Map<number, Attachment>();
  let payloadJson: string | undefined;
  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  let total = 0;
  const max = deps.config.attachmentMaxBytes;
  try {
    for await (const part of upload.parts) {
      if (part.kind === 'field') {
        if (part.name === 'payload_json') payloadJson = part.value;
        else fields[part.name] = part.value;
        continue;
      }
      let index = fileIndexOf(part.name);
      if (index === undefined) {
        index = 0;
        while (files.has(index)) index += 1;
      }
      if (files.size >= MAX_FILES || index >= MAX_FILES) throw tooManyFiles();
      if (files.has(index)) throw ApiErrors.invalidFormBody(addFieldError({}, ['files', index], { code: 'BASE_TYPE_DUPLICATE', message: `files[${index}] was sent twice.` }));
      const attachment: Attachment = {
        id: deps.ids.next(),
        messageId: target.messageId,
        channelId: target.channelId,
        filename: sanitizeFilename(part.filename),
        size: 0,
        contentType: sanitizeContentType(part.contentType),
        width: null,
        height: null,
        description: null,
        storageKey: '',
        createdAt: deps.clock.now(),
      };
      // Id-addressed (docs/files.md): the bytes live under the attachment's own id.
      attachment.storageKey = attachment.id;
      await insertAttachment(deps.db, attachment);
      files.set(index, attachment);
      const head: Buffer[] = [];
      let headBytes = 0;
      let size = 0;
      const source = part.stream;
      // One Transform between the parser's stream and the store, not async generators: the
      // per-chunk cost of an upload is most of its CPU (docs/performance.md §Files).
      const counted = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length;
          total += chunk.length;
          // Counted as it arrives: the upload stops at the first byte past the limit.
          if (total > max) return done(ApiErrors.payloadTooLarge());
          if (headBytes < HEAD_BYTES) {
            head.push(chunk);
            headBytes += chunk.length;
          }
          done(null, chunk);
        },
      });
      // pipeline() passes on a parser error or a part that closes before its end (a body cut
      // short) as `counted`'s error, which fails the write, which removes what it wrote; a refused
      // file (over the limit) destroys the part, as a consumer that stops iterating does.
      void pipeline(source, counted).catch(() => {});
      await deps.files.put(attachment.storageKey, counted);
      attachment.size = size;
      // Issue #42 "Bad input": a declared image that is not one is a plain file, never shown inline.
      const image = rasterImage(Buffer.concat(head, headBytes).subarray(0, HEAD_BYTES));
      if (image) {
        attachment.contentType = image.type;
        attachment.width = image.width;
        attachment.height = image.height;
      }
      await updateAttachment(deps.db, attachment.id, { size, contentType: attachment.contentType, width: attachment.width, height: attachment.height });
    }
  } catch (error) {
    await discardFiles(deps, [...files.values()]);
    throw upload.asError(error);
  }
  let body: unknown = { ...fields };
  if (payloadJson !== undefined) {
    try {
      if (jsonNestsDeeperThan(Buffer.from(payloadJson), JSON_DEPTH_MAX)) throw new Error('too deep');
      body = JSON.parse(payloadJson) as unknown;
    } catch {
      await discardFiles(deps, [...files.values()]);
      throw new ApiError(400, 50109, 'The request body contains invalid JSON.');
    }
  }
  return { body, files };
}

/** What the payload's `attachments` array says: the files the message ends with. */
export interface MessageFiles {
  /** Every file of the message after this request, in order: kept ones, then new ones. */
  all: Attachment[];
  /** Files of the message this edit drops (not listed in its `attachments`). */
  dropped: Attachment[];
  /** Their names, which `attachment://name` may refer to. */
  names: ReadonlySet<string>;
}

/**
 * Applies the payload's `attachments` (Discord's `[{ id, filename?, description? }]`): `id` is a
 * new file's `files[n]` index, or (edits) the id of a file the message already has, to keep it.
 * When the array is present in an edit, files of the message it does not list are dropped; when
 * absent, they all stay. A new file is attached whether or not it is listed. Errors are 50035 at
 * `attachments[i]`; the caller discards the new files.
 */
export async function settleMessageFiles(deps: Deps, body: unknown, received: Map<number, Attachment>, existing: readonly Attachment[] = []): Promise<MessageFiles> {
  const raw = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>)['attachments'] : undefined;
  const kept = new Set<string>(existing.map((a) => a.id));
  const changes = new Map<string, { filename?: string; description?: string | null }>();
  let tree: ErrorTree | undefined;
  const fail = (path: (string | number)[], code: string, message: string) => {
    tree = addFieldError(tree ?? {}, ['attachments', ...path], { code, message });
  };
  if (raw !== undefined && raw !== null) {
    if (!Array.isArray(raw)) fail([], 'LIST_TYPE_CONVERT', 'Only iterables may be used in a ListType');
    else if (raw.length > MAX_FILES + existing.length) fail([], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_FILES} or fewer in length.`);
    else {
      kept.clear();
      raw.forEach((item: unknown, i) => {
        if (typeof item !== 'object' || item === null || Array.isArray(item)) return fail([i], 'DICT_TYPE_CONVERT', 'Only dictionaries may be used in a DictType');
        const entry = item as Record<string, unknown>;
        const id = typeof entry['id'] === 'number' ? String(entry['id']) : entry['id'];
        if (typeof id !== 'string' || !/^[0-9]{1,20}$/.test(id)) return fail([i, 'id'], 'NUMBER_TYPE_COERCE', 'Value is not snowflake or a file index.');
        const fresh = id.length <= 2 ? received.get(Number(id)) : undefined;
        const old = existing.find((a) => a.id === id);
        const target = fresh ?? old;
        if (target === undefined) return fail([i, 'id'], 'ATTACHMENT_NOT_FOUND', fresh === undefined && id.length <= 2 ? `No file was uploaded as files[${id}].` : 'Unknown attachment.');
        if (old) kept.add(old.id);
        const change: { filename?: string; description?: string | null } = {};
        const filename = entry['filename'];
        if (filename !== undefined && filename !== null) {
          if (typeof filename !== 'string' || filename.length === 0 || filename.length > 1024) return fail([i, 'filename'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 1024 in length.');
          change.filename = sanitizeFilename(filename);
        }
        const description = entry['description'];
        if (description !== undefined) {
          if (description !== null && (typeof description !== 'string' || [...description].length > DESCRIPTION_MAX)) return fail([i, 'description'], 'BASE_TYPE_MAX_LENGTH', `Must be ${DESCRIPTION_MAX} or fewer in length.`);
          change.description = description === null || description.trim() === '' ? null : description;
        }
        changes.set(target.id, change);
      });
    }
  }
  if (tree) throw ApiErrors.invalidFormBody(tree);
  const all = [...existing.filter((a) => kept.has(a.id)), ...received.values()];
  if (all.length > MAX_FILES) throw tooManyFiles();
  for (const a of all) {
    const change = changes.get(a.id);
    if (!change || (change.filename === undefined && change.description === undefined)) continue;
    if (change.filename !== undefined) a.filename = change.filename;
    if (change.description !== undefined) a.description = change.description;
    await updateAttachment(deps.db, a.id, change);
  }
  return { all, dropped: existing.filter((a) => !kept.has(a.id)), names: new Set(all.map((a) => a.filename)) };
}

/** Removes files (bytes first, then rows: a row left behind is swept, bytes without a row would not be). */
export async function discardFiles(deps: Pick<Deps, 'db' | 'files'>, files: readonly Pick<Attachment, 'id' | 'storageKey'>[]): Promise<void> {
  if (files.length === 0) return;
  await deps.files.delete(files.map((f) => f.storageKey));
  await deleteAttachmentRows(deps.db, files.map((f) => f.id));
}

/** The files of these messages, by message id. */
export async function filesOfMessages(deps: Deps, messageIds: readonly string[]): Promise<Map<string, Attachment[]>> {
  const byMessage = new Map<string, Attachment[]>();
  for (const a of await listAttachmentsOf(deps.db, messageIds)) {
    const list = byMessage.get(a.messageId);
    if (list) list.push(a);
    else byMessage.set(a.messageId, [a]);
  }
  return byMessage;
}

/** Removes the files of messages deleted just now (the sweep would, later; this frees them at once). */
export async function removeFilesOfMessages(deps: Deps, messageIds: readonly string[]): Promise<void> {
  await discardFiles(deps, await listAttachmentsOf(deps.db, messageIds));
}

/** Discord's attachment objects, with URLs signed now (a viewer always gets fresh ones). */
export function presentFiles(deps: Deps, files: readonly Attachment[]): AttachmentResource[] {
  const now = deps.clock.now();
  return files.map((a) => presentAttachment(a, attachmentUrl(a, signAttachment(deps.secrets[0], a.channelId, a.id, now), deps.config.baseUrl)));
}

export function fileViews(deps: Deps, files: readonly Attachment[]): FileView[] {
  const now = deps.clock.now();
  return files.map((a) => ({
    id: a.id,
    filename: a.filename,
    size: a.size,
    url: attachmentUrl(a, signAttachment(deps.secrets[0], a.channelId, a.id, now)),
    image: isInlineImage(a) && a.width !== null && a.height !== null ? { width: a.width, height: a.height } : null,
    description: a.description,
  }));
}

/** Issue #36 §4's rule for images, for every file: nothing in it may run or load anything. */
const FILE_CSP = `${NON_DOCUMENT_CSP}; sandbox`;

/** What GET /attachments/… answers: the headers and, unless 416, the bytes. */
export interface ServedFile {
  status: 200 | 206 | 416;
  headers: Record<string, string>;
  body: Readable | Buffer;
}

/**
 * GET /attachments/{channel_id}/{attachment_id}/{filename}?ex&is&hm (issue #42 §3): undefined (a
 * plain 404: nothing tells which) for a bad or expired signature or no such file. One `bytes=` range
 * is honoured (206, or 416 outside the file). Only PNG, JPEG, GIF and WebP read from the bytes
 * are served inline; everything else, SVG and HTML included, is a download, with nosniff.
 */
export async function serveFile(deps: Deps, channelId: string, attachmentId: string, query: Record<string, unknown>, rangeHeader: string | undefined): Promise<ServedFile | undefined> {
  if (!isSnowflake(channelId) || !isSnowflake(attachmentId) || !verifyAttachment(deps.secrets, channelId, attachmentId, query, deps.clock.now())) return undefined;
  const file = await findAttachment(deps.db, channelId, attachmentId);
  if (!file) return undefined;
  const inline = isInlineImage(file);
  const expires = parseInt(String(query['ex']), 16) * 1000;
  const headers: Record<string, string> = {
    'content-type': inline && file.contentType ? file.contentType : (file.contentType ?? 'application/octet-stream'),
    'content-disposition': contentDisposition(file),
    'x-content-type-options': 'nosniff',
    // Nothing in a file runs as part of our origin, even if a browser were to render it.
    'content-security-policy': FILE_CSP,
    'accept-ranges': 'bytes',
    'cache-control': `private, max-age=${Math.max(0, Math.floor((expires - deps.clock.now()) / 1000))}`,
  };
  const range = parseRange(rangeHeader, file.size);
  if (range === 'unsatisfiable') return { status: 416, headers: { ...headers, 'content-range': `bytes */${file.size}` }, body: Buffer.alloc(0) };
  if (file.size === 0) return { status: 200, headers: { ...headers, 'content-length': '0' }, body: Buffer.alloc(0) };
  const { start, end } = range ?? { start: 0, end: file.size - 1 };
  const body = await deps.files.read(file.storageKey, { start, end });
  if (!body) return undefined;
  headers['content-length'] = String(end - start + 1);
  if (range) headers['content-range'] = `bytes ${start}-${end}/${file.size}`;
  return { status: range ? 206 : 200, headers, body };
}
