/**
 * Multipart bodies for app.inject(), encoded by the platform's own FormData (undici), as a
 * Discord client's HTTP stack would send them (issue #42 §2).
 */
export interface FilePart {
  /** The form field: `files[0]`, … */
  field: string;
  filename: string;
  type?: string;
  data: Buffer | string;
}

export async function multipartBody(fields: Record<string, string>, files: FilePart[]): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const f of files) {
    const bytes = typeof f.data === 'string' ? Buffer.from(f.data) : f.data;
    form.append(f.field, new Blob([new Uint8Array(bytes)], f.type === undefined ? {} : { type: f.type }), f.filename);
  }
  const response = new Response(form);
  return { payload: Buffer.from(await response.arrayBuffer()), headers: { 'content-type': response.headers.get('content-type') ?? '' } };
}

/** The header bytes of a PNG of the given size (signature and IHDR: what dimension readers look at), then `extra` bytes. */
export function pngHeader(width: number, height: number, extra = 64): Buffer {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'latin1');
  ihdr.writeUInt32BE(width, 8);
  ihdr.writeUInt32BE(height, 12);
  ihdr.writeUInt8(8, 16);
  ihdr.writeUInt8(6, 17);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr, Buffer.alloc(extra, 7)]);
}
