/**
 * What: multipart/form-data for the routes that take files (issue #42 §2: webhook execute and
 * edit, bots' messages), read with @fastify/multipart (busboy underneath: streaming, linear in the
 * body) and handed to the services as an Upload (modules/files/uploads.ts), Fastify-free.
 * Invariant: nothing here buffers a file: each file part is a stream the files service writes to
 * the blob store as it arrives; every parser error becomes a 4xx ApiError (a truncated or
 * malformed body 400, too much 413), never a 5xx.
 * Tested: test/http/attachments.test.ts.
 */
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { ApiError, ApiErrors } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import { MAX_FILES } from './attachments.js';
import { tooManyFiles } from './files.service.js';
import type { Upload, UploadPart } from './uploads.js';

/**
 * Registers the multipart parser in `app` (an encapsulated context holding only the routes that
 * take files: the plugin's hooks then run for those routes only).
 */
export async function installMultipart(app: App): Promise<void> {
  await app.register(multipart, { throwFileSizeLimit: false });
}

/** Bytes a file part's stream holds before the parser waits for its consumer (docs/performance.md §Files). */
const FILE_PART_BUFFER_BYTES = 256 * 1024;

/** Busboy's and the plugin's errors as the API answers them. */
function asApiError(error: unknown): unknown {
  if (error instanceof ApiError) return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 'FST_FILES_LIMIT') return tooManyFiles();
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT' || code === 'FST_REQ_FILE_TOO_LARGE') return ApiErrors.payloadTooLarge();
  if (code === 'FST_INVALID_JSON_FIELD_ERROR') return new ApiError(400, 50109, 'The request body contains invalid JSON.');
  // Premature close, a missing boundary, a malformed part header, a prototype field name: the body is not one we can read.
  return new ApiError(400, 0, 'The multipart/form-data body is malformed or was cut short.');
}

/**
 * The request's multipart body as an Upload, or undefined when it is not multipart (a JSON body,
 * parsed as before). `maxBytes` is GATEHOUSE_ATTACHMENT_MAX_BYTES; `fieldBytes` the largest
 * payload_json (a message's JSON body limit).
 */
export function uploadOf(request: FastifyRequest, maxBytes: number, fieldBytes: number): Upload | undefined {
  if (!request.isMultipart()) return undefined;
  const parts = request.parts({
    // One more byte than the limit, so the files service sees the excess and answers 413 itself.
    limits: { fileSize: maxBytes + 1, files: MAX_FILES, fields: 32, fieldSize: fieldBytes, parts: MAX_FILES + 32, headerPairs: 64 },
    // A file part buffers up to FILE_PART_BUFFER_BYTES before busboy pauses the request (Node's
    // default, 16 KiB, is less than one socket read: busboy paused and resumed at every chunk).
    fileHwm: FILE_PART_BUFFER_BYTES,
  });
  async function* mapped(): AsyncGenerator<UploadPart> {
    try {
      for await (const part of parts) {
        if (part.type === 'field') {
          // Busboy cuts a field at fieldSize and says so: a payload_json cut short is too large, not malformed.
          if (part.valueTruncated || part.fieldnameTruncated) throw ApiErrors.payloadTooLarge();
          // A field sent with Content-Type: application/json (discord.py's payload_json) arrives parsed.
          const value = typeof part.value === 'string' ? part.value : JSON.stringify(part.value);
          yield { kind: 'field', name: part.fieldname, value };
        } else {
          // Busboy takes a part of type application/octet-stream without a file name for a file too (and a browser's empty file input has the name ""): no name is "".
          // The parser's stream as it is: its consumer maps its errors with asError (no generator per chunk on the upload path).
          yield { kind: 'file', name: part.fieldname, filename: part.filename ?? '', contentType: part.mimetype, stream: part.file };
        }
      }
    } catch (error) {
      throw asApiError(error);
    }
  }
  return { parts: mapped(), asError: asApiError };
}
