/**
 * What: an upload as the services see it (issue #42 §2): the parts of a multipart/form-data body
 * in the order they arrive, each file's bytes a stream, without Fastify (http/multipart.ts makes
 * one from a request). Files may come before or after `payload_json` (discord.js sends them
 * first, discord.py last), so files are stored as they arrive and the payload is read at the end.
 */
import type { Readable } from 'node:stream';

export type UploadPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string; contentType: string | undefined; stream: Readable };

export interface Upload {
  parts: AsyncIterable<UploadPart>;
  /**
   * The API error for what a file's stream failed with (the parser's own errors: a truncated or
   * malformed body 400, too much 413; an ApiError as it is). A file's stream is the parser's, not
   * wrapped (docs/performance.md §Files), so its consumer maps what it throws.
   */
  asError(error: unknown): unknown;
}

/** The index `n` of Discord's `files[n]` field name; undefined for any other name (older clients' `file`, `file1`: numbered in order of arrival). */
export function fileIndexOf(name: string): number | undefined {
  const match = /^files\[(\d{1,2})\]$/.exec(name);
  return match ? Number(match[1]) : undefined;
}
