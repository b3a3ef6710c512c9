import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_EVERYONE_PERMISSIONS, Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { updateRole } from '../../src/modules/directory/roles.service.js';
import { createServer, type CreatedServer } from '../../src/modules/directory/servers.service.js';
import { operatorActing, personActingOf } from '../support/acting.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { testDialect } from '../support/database.js';
import { csrfFrom, signedIn } from '../support/directory-fixtures.js';
import { multipartBody, pngHeader, type FilePart } from '../support/multipart.js';
import type { PageAgent } from '../support/page-agent.js';

/**
 * Issue #42 §2 "People": the composer's post (POST /channels/{id}/messages, the page route) takes
 * multipart/form-data with files, on the same store and under the same limits as bots' and
 * webhooks' posts; its CSRF token comes in the X-CSRF-Token header (composer.js) or the action
 * URL's `_csrf` (the form without script); files need Attach files. Refusals store nothing.
 */
const LIMIT = 16 * 1024;
const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

let t: TestApp;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-composer-files-'));
  t = await createTestApp({ env: { GATEHOUSE_FILES_DIR: dir, GATEHOUSE_ATTACHMENT_MAX_BYTES: String(LIMIT) } });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every stored file and message: attachment rows, the store's bytes, message rows. */
async function stored(app: TestApp = t, root: string = dir): Promise<{ rows: number; blobs: number; messages: number }> {
  const rows = (await app.services.db.selectFrom('attachments').select('id').execute()).length;
  const messages = (await app.services.db.selectFrom('messages').select('id').execute()).length;
  if (app.services.config.fileStore === 'postgres') {
    return { rows, messages, blobs: new Set((await app.services.db.selectFrom('file_chunks').select('storage_key').execute()).map((r) => r.storage_key)).size };
  }
  const walk = (d: string): number => readdirSync(d).reduce((n, name) => n + (statSync(join(d, name)).isDirectory() ? walk(join(d, name)) : 1), 0);
  return { rows, messages, blobs: walk(root) };
}

interface Room {
  server: CreatedServer;
  channelId: string;
  owner: PageAgent;
}

async function room(): Promise<Room> {
  const owner = await signedIn(t, { name: 'Ada Owner' });
  const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Reports' });
  return { server, channelId: server.channels[0]?.id as string, owner: owner.agent };
}

function cookieOf(agent: PageAgent): string {
  return [...agent.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
}

/** A multipart post to the composer's route, as composer.js sends it (or, with `via: 'query'`, as the form without script does). */
async function post(
  agent: PageAgent,
  channelId: string,
  fields: Record<string, string>,
  files: FilePart[],
  options: { csrf?: string | null; via?: 'header' | 'query'; json?: boolean; cut?: number; emptyFileInput?: boolean } = {},
) {
  const token = options.csrf === undefined ? await csrfFrom(agent, `/channels/${channelId}`) : options.csrf;
  const encoded = await multipartBody(fields, files);
  const body = options.emptyFileInput ? withEmptyFileInput(encoded) : encoded;
  const via = options.via ?? 'header';
  const query = token !== null && via === 'query' ? `?_csrf=${encodeURIComponent(token)}` : '';
  return t.app.inject({
    method: 'POST',
    url: `/channels/${channelId}/messages${query}`,
    headers: {
      ...body.headers,
      cookie: cookieOf(agent),
      ...(token !== null && via === 'header' ? { 'x-csrf-token': token } : {}),
      ...((options.json ?? true) ? { accept: 'application/json' } : {}),
    },
    payload: options.cut === undefined ? body.payload : body.payload.subarray(0, options.cut),
  });
}

/** What a browser sends for a form's file input left empty: a part with an empty file name (undici's FormData leaves the name out). */
function withEmptyFileInput(body: { payload: Buffer; headers: Record<string, string> }): { payload: Buffer; headers: Record<string, string> } {
  const boundary = /boundary=(.+)$/.exec(body.headers['content-type'] ?? '')?.[1] ?? '';
  const end = Buffer.from(`--${boundary}--\r\n`);
  const empty = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n\r\n`);
  const at = body.payload.lastIndexOf(end);
  return { headers: body.headers, payload: Buffer.concat([body.payload.subarray(0, at), empty, end]) };
}

const image = (): FilePart => ({ field: 'files[0]', filename: 'chart.png', type: 'image/png', data: pngHeader(640, 480, 500) });

describe(`people post files from the composer (${testDialect}, its default store)`, () => {
  it('the channel page offers the file input in a multipart form whose action carries the CSRF token', async () => {
    const { channelId, owner } = await room();
    const page = await owner.get(`/channels/${channelId}`);
    const token = await csrfFrom(owner, `/channels/${channelId}`);
    expect(page.body).toMatch(/<form method="post" action="\/channels\/\d+\/messages\?_csrf=[^"]+" id="post" class="card" enctype="multipart\/form-data" data-max-bytes="16384" data-max-files="10">/);
    expect(page.body).toContain(`?_csrf=${token}`);
    expect(page.body).toContain('<input type="file" id="files" name="files" multiple');
    expect(page.body).toContain('<label for="files">Attach files</label>');
  });

  it('a multipart post with an image and a PDF (composer.js: payload_json, files[n], the token in X-CSRF-Token) is 201 with the rendered message, its files stored', async () => {
    const { channelId, owner } = await room();
    const res = await post(owner, channelId, { payload_json: JSON.stringify({ content: 'Nightly numbers', attachments: [{ id: 0, description: 'Latency chart' }, { id: 1 }] }) }, [
      image(),
      { field: 'files[1]', filename: 'report.pdf', type: 'application/pdf', data: pdf },
    ]);
    expect(res.statusCode, res.body).toBe(201);
    const answer = res.json() as { id: string; html: string };
    expect(answer.html).toContain('Nightly numbers');
    expect(answer.html).toMatch(/<img src="\/attachments\/\d+\/\d+\/chart\.png\?ex=[0-9a-f]+&amp;is=[0-9a-f]+&amp;hm=[0-9a-f]+" alt="Latency chart" width="400" height="300"/);
    expect(answer.html).toContain('download="report.pdf"');
    const rows = await t.services.db.selectFrom('attachments').select(['filename', 'size', 'width', 'height', 'description']).where('message_id', '=', answer.id).orderBy('id').execute();
    // Numbers as each driver returns them (bigint on SQLite, number or string on PostgreSQL).
    const num = (v: unknown) => (v === null ? null : Number(v));
    const files = rows.map((r) => ({ filename: r.filename, size: num(r.size), width: num(r.width), height: num(r.height), description: r.description }));
    expect(files).toEqual([
      { filename: 'chart.png', size: pngHeader(640, 480, 500).length, width: 640, height: 480, description: 'Latency chart' },
      { filename: 'report.pdf', size: pdf.length, width: null, height: null, description: null },
    ]);
    // The channel view shows them too (the image with its alt text).
    expect((await owner.get(`/channels/${channelId}`)).body).toContain('alt="Latency chart"');
  });

  it('without script: the form posts content and files (the token in the action URL) and is sent to the channel (303); an empty file input is no file', async () => {
    const { channelId, owner } = await room();
    const res = await post(owner, channelId, { content: 'From the form' }, [{ field: 'files', filename: 'report.pdf', type: 'application/pdf', data: pdf }], { via: 'query', json: false });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers['location']).toBe(`/channels/${channelId}#post`);
    const message = await t.services.db.selectFrom('messages').select(['id', 'content']).where('channel_id', '=', channelId).executeTakeFirstOrThrow();
    expect(message.content).toBe('From the form');
    expect((await t.services.db.selectFrom('attachments').select('filename').where('message_id', '=', message.id).execute()).map((r) => r.filename)).toEqual(['report.pdf']);

    const before = await stored();
    const textOnly = await post(owner, channelId, { content: 'Only words' }, [], { via: 'query', json: false, emptyFileInput: true });
    expect(textOnly.statusCode, textOnly.body).toBe(303);
    expect(await stored()).toEqual({ ...before, messages: before.messages + 1 });
  });

  it('a file alone, without text, is a message; neither text nor file is refused (50006) and stores nothing', async () => {
    const { channelId, owner } = await room();
    const res = await post(owner, channelId, { payload_json: JSON.stringify({ content: '' }) }, [image()]);
    expect(res.statusCode, res.body).toBe(201);
    const before = await stored();
    const empty = await post(owner, channelId, { content: '  ' }, []);
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ code: 50006, error: 'Cannot send an empty message' });
    expect(await stored()).toEqual(before);
  });

  it('CSRF: without a token, with a wrong one, or with the token only inside the body, 403 and nothing stored', async () => {
    const { channelId, owner } = await room();
    const before = await stored();
    const token = await csrfFrom(owner, `/channels/${channelId}`);
    const none = await post(owner, channelId, { content: 'forged' }, [image()], { csrf: null });
    expect(none.statusCode).toBe(403);
    expect(none.body).toContain('This form has expired or was not sent from this site.');
    const wrong = await post(owner, channelId, { content: 'forged' }, [image()], { csrf: 'A'.repeat(43), via: 'query' });
    expect(wrong.statusCode).toBe(403);
    // In the body, a token would be read only after the files it guards: it does not count.
    const inBody = await post(owner, channelId, { _csrf: token, content: 'forged' }, [image()], { csrf: null });
    expect(inBody.statusCode).toBe(403);
    // Another person's token (another session) is no token.
    const other = await signedIn(t, { name: 'Mallory' });
    const foreign = await post(other.agent, channelId, { content: 'forged' }, [image()], { csrf: token });
    expect(foreign.statusCode).toBe(403);
    expect(await stored()).toEqual(before);
  });

  it('a cross-site Origin is refused before anything is read', async () => {
    const { channelId, owner } = await room();
    const before = await stored();
    const token = await csrfFrom(owner, `/channels/${channelId}`);
    const body = await multipartBody({ content: 'forged' }, [image()]);
    const res = await t.app.inject({ method: 'POST', url: `/channels/${channelId}/messages`, headers: { ...body.headers, cookie: cookieOf(owner), 'x-csrf-token': token, origin: 'https://evil.example' }, payload: body.payload });
    expect(res.statusCode).toBe(403);
    expect(await stored()).toEqual(before);
  });

  describe('Attach files', () => {
    async function memberWithout(permission: bigint): Promise<{ channelId: string; member: PageAgent }> {
      const { server, channelId } = await room();
      await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: DEFAULT_EVERYONE_PERMISSIONS & ~permission });
      const member = await signedIn(t, { name: 'Bo Member' });
      await addMember(t.services, operatorActing(), server.id, member.person.id);
      return { channelId, member: member.agent };
    }

    it('without it: files are refused (403 50013, naming the permission) and nothing is stored; the page has no file input', async () => {
      const { channelId, member } = await memberWithout(Permission.ATTACH_FILES);
      const page = await member.get(`/channels/${channelId}`);
      expect(page.body).toContain('<form method="post" action="/channels/');
      expect(page.body).not.toContain('type="file"');
      expect(page.body).not.toContain('multipart/form-data');
      const before = await stored();
      const res = await post(member, channelId, { content: 'look' }, [image()]);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 50013, error: 'You need the Attach files permission in this server to do this.' });
      // The same refusal as a page for the form without script.
      const page403 = await post(member, channelId, { content: 'look' }, [image()], { via: 'query', json: false });
      expect(page403.statusCode).toBe(403);
      expect(page403.body).toContain('Attach files');
      expect(await stored()).toEqual(before);
    });

    it('without it, text from a multipart form (its file input empty) is still posted', async () => {
      const { channelId, member } = await memberWithout(Permission.ATTACH_FILES);
      const res = await post(member, channelId, { content: 'just text' }, [], { via: 'query', json: false, emptyFileInput: true });
      expect(res.statusCode, res.body).toBe(303);
      expect((await t.services.db.selectFrom('messages').select('content').where('channel_id', '=', channelId).execute()).map((r) => r.content)).toEqual(['just text']);
    });

    it('without Send messages nothing is read or stored, files or not', async () => {
      const { channelId, member } = await memberWithout(Permission.SEND_MESSAGES);
      const before = await stored();
      const res = await post(member, channelId, { content: 'look' }, [image()]);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 50013 });
      expect(await stored()).toEqual(before);
    });
  });

  describe('limits and bad bodies (the same as bots and webhooks), nothing stored', () => {
    it(`more than GATEHOUSE_ATTACHMENT_MAX_BYTES of files in all: 413 (40005)`, async () => {
      const { channelId, owner } = await room();
      const before = await stored();
      const res = await post(owner, channelId, { payload_json: JSON.stringify({ content: 'too big' }) }, [
        { field: 'files[0]', filename: 'a.bin', data: Buffer.alloc(LIMIT / 2, 1) },
        { field: 'files[1]', filename: 'b.bin', data: Buffer.alloc(LIMIT / 2 + 1, 2) },
      ]);
      expect(res.statusCode).toBe(413);
      expect(res.json()).toMatchObject({ code: 40005, message: 'Request entity too large', error: 'Files can be at most 16 kB in all per message. Nothing was sent.' });
      // Without script: the form again, with the sentence and the text as typed.
      const form = await post(owner, channelId, { content: 'Typed <before> the files' }, [{ field: 'files', filename: 'big.bin', data: Buffer.alloc(LIMIT + 1, 1) }], { via: 'query', json: false });
      expect(form.statusCode).toBe(413);
      expect(form.body).toContain('<div class="error" role="alert">Files can be at most 16 kB in all per message. Nothing was sent.</div>');
      expect(form.body).toContain('>Typed &lt;before&gt; the files</textarea>');
      expect(await stored()).toEqual(before);
    });

    it('an 11th file: 400 (50035 at attachments)', async () => {
      const { channelId, owner } = await room();
      const before = await stored();
      const files = Array.from({ length: 11 }, (_, i) => ({ field: `files[${i}]`, filename: `f${i}.txt`, data: 'x' }));
      const res = await post(owner, channelId, { payload_json: JSON.stringify({ content: 'many' }) }, files);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 50035, errors: { attachments: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } });
      expect(await stored()).toEqual(before);
    });

    it('text over 2000 characters with a file: 400 (50035 at content)', async () => {
      const { channelId, owner } = await room();
      const before = await stored();
      const res = await post(owner, channelId, { payload_json: JSON.stringify({ content: 'x'.repeat(2001) }) }, [image()]);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 50035, errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } });
      expect(await stored()).toEqual(before);
    });

    it('a body cut short in the middle of a file: 400', async () => {
      const { channelId, owner } = await room();
      const before = await stored();
      const res = await post(owner, channelId, { content: 'cut' }, [{ field: 'files[0]', filename: 'a.bin', data: Buffer.alloc(8000, 3) }], { cut: 4000 });
      expect(res.statusCode).toBe(400);
      expect(await stored()).toEqual(before);
    });

    it('a payload_json that is not JSON: 400 (50109)', async () => {
      const { channelId, owner } = await room();
      const before = await stored();
      const res = await post(owner, channelId, { payload_json: '{"content": ' }, [image()]);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 50109 });
      expect(await stored()).toEqual(before);
    });
  });

  it('a small form post (urlencoded) works as before, with its token in the body', async () => {
    const { channelId, owner } = await room();
    const res = await owner.postRaw(`/channels/${channelId}/messages`, { content: 'plain', _csrf: await csrfFrom(owner, `/channels/${channelId}`) });
    expect(res.statusCode).toBe(303);
    const refused = await owner.postRaw(`/channels/${channelId}/messages`, { content: 'plain' });
    expect(refused.statusCode).toBe(403);
  });
});

describe('a slow upload from the composer (GATEHOUSE_REQUEST_TIMEOUT_MS)', () => {
  let slow: TestApp;
  let slowDir: string;
  let port: number;
  beforeAll(async () => {
    slowDir = mkdtempSync(join(tmpdir(), 'gatehouse-composer-slow-'));
    slow = await createTestApp({ env: { GATEHOUSE_FILES_DIR: slowDir, GATEHOUSE_REQUEST_TIMEOUT_MS: '3000', GATEHOUSE_HEADERS_TIMEOUT_MS: '1000' } });
    await slow.app.listen({ port: 0, host: '127.0.0.1' });
    port = (slow.app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await slow.close();
    rmSync(slowDir, { recursive: true, force: true });
  });

  it('is cut off when its time is up, and the file it had begun is removed: nothing stored', async () => {
    const owner = await signedIn(slow, { name: 'Ada Owner' });
    const server = await createServer(slow.services, personActingOf(owner.person.id), { name: 'Reports' });
    const channelId = server.channels[0]?.id as string;
    const token = await csrfFrom(owner.agent, `/channels/${channelId}`);
    const before = await stored(slow, slowDir);
    const boundary = 'composer-slow-upload';
    const opening = `--${boundary}\r\nContent-Disposition: form-data; name="content"\r\n\r\nslow\r\n--${boundary}\r\nContent-Disposition: form-data; name="files[0]"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const head = [
      `POST /channels/${channelId}/messages HTTP/1.1`,
      'Host: 127.0.0.1',
      `Content-Type: multipart/form-data; boundary=${boundary}`,
      'Content-Length: 1000000',
      `Cookie: ${cookieOf(owner.agent)}`,
      `X-CSRF-Token: ${token}`,
      'Accept: application/json',
      '',
      '',
    ].join('\r\n');
    const socket = net.connect(port, '127.0.0.1');
    const closed = new Promise<string>((resolve) => {
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(answer));
    });
    socket.on('connect', () => socket.write(head + opening + 'x'.repeat(1000)));
    const trickle = setInterval(() => socket.writable && socket.write('x'), 100);
    try {
      // The file's row is written as its first bytes arrive (files.service.ts receiveUpload).
      await vi.waitFor(async () => expect((await stored(slow, slowDir)).rows).toBe(before.rows + 1), { timeout: 2500, interval: 25 });
      const answer = await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 (408|400) /);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
    await vi.waitFor(async () => expect(await stored(slow, slowDir)).toEqual(before), { timeout: 5000, interval: 50 });
  });
});
