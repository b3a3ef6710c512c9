import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { person } from '../../src/core/actor.js';
import { deleteChannel } from '../../src/modules/directory/channels.service.js';
import { actingOf } from '../support/acting.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { testDialect } from '../support/database.js';
import { sweepOrphanFiles } from '../../src/storage/maintenance.js';
import { multipartBody, pngHeader, type FilePart } from '../support/multipart.js';
import { nextAddress } from '../support/oauth-factory.js';
import { given } from '../support/given.js';
import { call, createTestWebhook, type TestWebhook } from './webhook-url.fixtures.js';

/**
 * Issue #42 §2–§3: files through webhook execute and its message edit (Discord's multipart
 * format), served from our origin behind signed expiring URLs; limits and bad input store
 * nothing. Run on every store this database offers: the filesystem, and on PostgreSQL the
 * database store too.
 */
const stores = testDialect === 'postgres' ? (['fs', 'postgres'] as const) : (['fs'] as const);
const LIMIT = 64 * 1024;
if (testDialect !== 'postgres') console.log('attachments: the database store and the two-instance test run with TEST_DATABASE_URL (PostgreSQL) only: SQLite has no database that instances share');

for (const store of stores) {
  describe(`files on the ${store} store (${testDialect})`, () => {
    let t: TestApp;
    let dir: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-files-'));
      t = await createTestApp({ env: { GATEHOUSE_FILE_STORE: store, GATEHOUSE_FILES_DIR: dir, GATEHOUSE_ATTACHMENT_MAX_BYTES: String(LIMIT) } });
    });
    afterAll(async () => {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** Every stored file: rows, and the bytes the store holds (files on disk, or chunk rows). */
    async function stored(): Promise<{ rows: number; blobs: number }> {
      const rows = (await t.services.db.selectFrom('attachments').select('id').execute()).length;
      if (store === 'postgres') return { rows, blobs: new Set((await t.services.db.selectFrom('file_chunks').select('storage_key').execute()).map((r) => r.storage_key)).size };
      const walk = (d: string): number => readdirSync(d).reduce((n, name) => n + (statSync(join(d, name)).isDirectory() ? walk(join(d, name)) : 1), 0);
      return { rows, blobs: walk(dir) };
    }

    async function send(w: TestWebhook, method: 'POST' | 'PATCH', url: string, payload: unknown, files: FilePart[], fields: Record<string, string> = {}) {
      t.clock.advance(2000);
      const body = await multipartBody(payload === undefined ? fields : { ...fields, payload_json: JSON.stringify(payload) }, files);
      return t.app.inject({ method, url, remoteAddress: nextAddress(), ...body });
    }

    async function fetchFile(url: string, headers: Record<string, string> = {}) {
      const u = new URL(url);
      return t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}`, headers });
    }

    it('execute with files[n], payload_json and attachments[] posts the files; the message carries Discord attachment objects and attachment:// resolves', async () => {
      const w = await createTestWebhook(t);
      const png = pngHeader(640, 480, 2000);
      const res = await send(
        w,
        'POST',
        `${w.path}?wait=true`,
        {
          content: 'build #42 failed',
          embeds: [{ title: 'Chart', image: { url: 'attachment://chart.png' } }],
          attachments: [
            { id: 0, description: 'Latency over the last hour' },
            { id: 1, filename: 'build log.txt' },
          ],
        },
        [
          { field: 'files[0]', filename: 'chart.png', type: 'image/png', data: png },
          { field: 'files[1]', filename: 'log.txt', type: 'text/plain', data: 'line 1\nline 2\n' },
        ],
      );
      expect(res.statusCode, res.body).toBe(200);
      const message = res.json();
      expect(message.content).toBe('build #42 failed');
      expect(message.attachments).toHaveLength(2);
      const [chart, log] = message.attachments;
      expect(chart).toMatchObject({ filename: 'chart.png', size: png.length, content_type: 'image/png', width: 640, height: 480, description: 'Latency over the last hour' });
      expect(chart.url).toMatch(new RegExp(`^http://localhost:8080/attachments/${w.channel.id}/${chart.id}/chart\\.png\\?ex=[0-9a-f]+&is=[0-9a-f]+&hm=[0-9a-f]{64}$`));
      expect(chart.proxy_url).toBe(chart.url);
      // Discord turns spaces into underscores; a text file has no dimensions.
      expect(log).toMatchObject({ filename: 'build_log.txt', size: 14, content_type: 'text/plain' });
      expect(log.width).toBeUndefined();
      expect(message.embeds[0].image).toEqual({ url: chart.url, proxy_url: chart.url });

      const image = await fetchFile(chart.url);
      expect(image.statusCode).toBe(200);
      expect(image.headers['content-type']).toBe('image/png');
      expect(image.headers['x-content-type-options']).toBe('nosniff');
      expect(image.headers['content-disposition']).toMatch(/^inline;/);
      expect(image.rawPayload.equals(png)).toBe(true);
      const text = await fetchFile(log.url);
      expect(text.statusCode).toBe(200);
      expect(text.headers['content-disposition']).toBe(`attachment; filename="build_log.txt"; filename*=UTF-8''build_log.txt`);
      expect(text.body).toBe('line 1\nline 2\n');

      // GET of the message by the webhook gives the same files with fresh URLs.
      const again = await call(t, 'GET', `${w.path}/messages/${message.id}`);
      expect(again.json().attachments.map((a: { id: string }) => a.id)).toEqual([chart.id, log.id]);
    });

    it('a message of files alone (no content, no embed) is not empty', async () => {
      const w = await createTestWebhook(t);
      const res = await send(w, 'POST', `${w.path}?wait=true`, undefined, [{ field: 'files[0]', filename: 'report.pdf', type: 'application/pdf', data: '%PDF-1.4 hello' }]);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ content: '', attachments: [{ filename: 'report.pdf', content_type: 'application/pdf', size: 14 }] });
    });

    it('plain form fields (content, username) are read when there is no payload_json', async () => {
      const w = await createTestWebhook(t);
      const res = await send(w, 'POST', `${w.path}?wait=true`, undefined, [{ field: 'file', filename: 'a.txt', data: 'a' }], { content: 'from fields', username: 'Deploy bot' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ content: 'from fields', author: { username: 'Deploy bot' }, attachments: [{ filename: 'a.txt' }] });
    });

    it('over GATEHOUSE_ATTACHMENT_MAX_BYTES in all is 413 (40005) and stores nothing', async () => {
      const w = await createTestWebhook(t);
      const before = await stored();
      const res = await send(w, 'POST', `${w.path}?wait=true`, { content: 'too big' }, [
        { field: 'files[0]', filename: 'a.bin', data: Buffer.alloc(LIMIT / 2, 1) },
        { field: 'files[1]', filename: 'b.bin', data: Buffer.alloc(LIMIT / 2 + 1, 2) },
      ]);
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual({ code: 40005, message: 'Request entity too large' });
      expect(await stored()).toEqual(before);
    });

    it('an 11th file is 400 (50035 at attachments) and stores nothing', async () => {
      const w = await createTestWebhook(t);
      const before = await stored();
      const files = Array.from({ length: 11 }, (_, i) => ({ field: `files[${i}]`, filename: `f${i}.txt`, data: 'x' }));
      const res = await send(w, 'POST', `${w.path}?wait=true`, { content: 'many' }, files);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 50035, errors: { attachments: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } });
      expect(await stored()).toEqual(before);
    });

    it('a payload_json that breaks the message rules is the same 400 as a JSON execute, and stores nothing', async () => {
      const w = await createTestWebhook(t);
      const before = await stored();
      const payload = { content: 'x'.repeat(2001) };
      const viaJson = await call(t, 'POST', `${w.path}?wait=true`, payload);
      const viaForm = await send(w, 'POST', `${w.path}?wait=true`, payload, [{ field: 'files[0]', filename: 'a.txt', data: 'a' }]);
      expect(viaForm.statusCode).toBe(400);
      expect(viaForm.json()).toEqual(viaJson.json());
      const invalid = await send(w, 'POST', `${w.path}?wait=true`, undefined, [{ field: 'files[0]', filename: 'a.txt', data: 'a' }], { payload_json: '{"content": ' });
      expect(invalid.statusCode).toBe(400);
      expect(invalid.json()).toEqual({ code: 50109, message: 'The request body contains invalid JSON.' });
      expect(await stored()).toEqual(before);
    });

    it('attachment:// naming no uploaded file is refused, with JSON and with files, and stores nothing', async () => {
      const w = await createTestWebhook(t);
      const before = await stored();
      const payload = { embeds: [{ title: 'x', thumbnail: { url: 'attachment://missing.png' } }] };
      const withFiles = await send(w, 'POST', `${w.path}?wait=true`, payload, [{ field: 'files[0]', filename: 'present.png', data: pngHeader(1, 1) }]);
      expect(withFiles.statusCode).toBe(400);
      expect(withFiles.json()).toMatchObject({ code: 50035, errors: { embeds: { 0: { thumbnail: { url: { _errors: [{ code: 'ATTACHMENT_NOT_FOUND' }] } } } } } });
      const json = await call(t, 'POST', `${w.path}?wait=true`, payload);
      expect(json.statusCode).toBe(400);
      expect(await stored()).toEqual(before);
    });

    it('a file part without a file name (busboy takes an application/octet-stream part for a file) is stored as "file", never a 5xx', async () => {
      const w = await createTestWebhook(t);
      // undici's FormData leaves out an empty file name: the part has a Content-Type and no filename.
      const res = await send(w, 'POST', `${w.path}?wait=true`, { content: 'nameless' }, [{ field: 'files[0]', filename: '', type: 'application/octet-stream', data: 'bytes' }]);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ attachments: [{ filename: 'file', size: 5 }] });
    });

    it('a truncated multipart body is 400 and stores nothing', async () => {
      const w = await createTestWebhook(t);
      const before = await stored();
      const body = await multipartBody({ payload_json: '{"content":"cut"}' }, [{ field: 'files[0]', filename: 'a.bin', data: Buffer.alloc(8000, 3) }]);
      t.clock.advance(2000);
      const res = await t.app.inject({ method: 'POST', url: `${w.path}?wait=true`, remoteAddress: nextAddress(), headers: body.headers, payload: body.payload.subarray(0, 4000) });
      expect(res.statusCode).toBe(400);
      expect(await stored()).toEqual(before);
    });

    it('a declared image that is not one, SVG and HTML are downloads (attachment, nosniff, no dimensions)', async () => {
      const w = await createTestWebhook(t);
      const res = await send(w, 'POST', `${w.path}?wait=true`, { content: 'suspicious' }, [
        { field: 'files[0]', filename: 'fake.png', type: 'image/png', data: '<script>alert(1)</script>' },
        { field: 'files[1]', filename: 'logo.svg', type: 'image/svg+xml', data: '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>' },
        { field: 'files[2]', filename: 'page.html', type: 'text/html', data: '<html><script>alert(1)</script></html>' },
      ]);
      expect(res.statusCode, res.body).toBe(200);
      for (const a of res.json().attachments) {
        expect(a.width).toBeUndefined();
        const served = await fetchFile(a.url);
        expect(served.statusCode).toBe(200);
        expect(served.headers['content-disposition']).toMatch(/^attachment;/);
        expect(served.headers['x-content-type-options']).toBe('nosniff');
        expect(served.headers['content-security-policy']).toContain('sandbox');
      }
    });

    it('file names are sanitised for the URL, headers and pages', async () => {
      const w = await createTestWebhook(t);
      const res = await send(w, 'POST', `${w.path}?wait=true`, { content: 'names' }, [{ field: 'files[0]', filename: '../../etc/pa"ss\r\nwd;.txt', data: 'x' }]);
      expect(res.statusCode, res.body).toBe(200);
      const [a] = res.json().attachments;
      // FormData percent-encodes the quote and the line break (WHATWG); the path and the rest are gone.
      expect(a.filename).toBe('pa_22ss_0D_0Awd_.txt');
      const served = await fetchFile(a.url);
      expect(served.headers['content-disposition']).toBe(`attachment; filename="pa_22ss_0D_0Awd_.txt"; filename*=UTF-8''pa_22ss_0D_0Awd_.txt`);
      const unicode = await send(w, 'POST', `${w.path}?wait=true`, { content: 'names', attachments: [{ id: 0, filename: 'Ünïcode <name>.txt' }] }, [{ field: 'files[0]', filename: 'x.txt', data: 'x' }]);
      const [u] = unicode.json().attachments;
      expect(u.filename).toBe('Ünïcode__name_.txt');
      expect((await fetchFile(u.url)).headers['content-disposition']).toBe(`attachment; filename="_n_code__name_.txt"; filename*=UTF-8''${encodeURIComponent('Ünïcode__name_.txt')}`);
    });

    it('a bad, foreign or expired signature is 404', async () => {
      const w = await createTestWebhook(t);
      const res = await send(w, 'POST', `${w.path}?wait=true`, { content: 'signed' }, [
        { field: 'files[0]', filename: 'a.txt', data: 'a' },
        { field: 'files[1]', filename: 'b.txt', data: 'b' },
      ]);
      const [a, b] = res.json().attachments;
      expect((await fetchFile(a.url)).statusCode).toBe(200);
      const tampered = a.url.replace(/hm=([0-9a-f])/, (_m: string, c: string) => `hm=${c === '0' ? '1' : '0'}`);
      expect((await fetchFile(tampered)).statusCode).toBe(404);
      // b's signature does not open a.
      const foreign = `${a.url.split('?')[0]}?${b.url.split('?')[1]}`;
      expect((await fetchFile(foreign)).statusCode).toBe(404);
      expect((await fetchFile(a.url.split('?')[0] as string)).statusCode).toBe(404);
      t.clock.advance(25 * 60 * 60 * 1000);
      expect((await fetchFile(a.url)).statusCode).toBe(404);
      // The webhook's GET gives a fresh URL that works.
      const fresh = (await call(t, 'GET', `${w.path}/messages/${res.json().id}`)).json().attachments[0].url;
      expect(fresh).not.toBe(a.url);
      expect((await fetchFile(fresh)).statusCode).toBe(200);
    });

    it('ranges: one bytes= range is 206 with Content-Range; outside the file 416', async () => {
      const w = await createTestWebhook(t);
      const data = Buffer.from(Array.from({ length: 40000 }, (_, i) => i % 251));
      const res = await send(w, 'POST', `${w.path}?wait=true`, { content: 'ranges' }, [{ field: 'files[0]', filename: 'data.bin', type: 'application/octet-stream', data }]);
      const [a] = res.json().attachments;
      const part = await fetchFile(a.url, { range: 'bytes=1000-33999' });
      expect(part.statusCode).toBe(206);
      expect(part.headers['content-range']).toBe('bytes 1000-33999/40000');
      expect(part.rawPayload.equals(data.subarray(1000, 34000))).toBe(true);
      const suffix = await fetchFile(a.url, { range: 'bytes=-10' });
      expect(suffix.rawPayload.equals(data.subarray(39990))).toBe(true);
      const outside = await fetchFile(a.url, { range: 'bytes=40000-' });
      expect(outside.statusCode).toBe(416);
      expect(outside.headers['content-range']).toBe('bytes */40000');
      const whole = await fetchFile(a.url);
      expect(whole.headers['accept-ranges']).toBe('bytes');
      expect(whole.rawPayload.equals(data)).toBe(true);
    });

    it('editing a webhook message adds files; attachments[] keeps only the files it lists', async () => {
      const w = await createTestWebhook(t);
      const posted = (await send(w, 'POST', `${w.path}?wait=true`, { content: 'v1' }, [{ field: 'files[0]', filename: 'old.txt', data: 'old' }])).json();
      const [old] = posted.attachments;
      const url = `${w.path}/messages/${posted.id}`;
      const added = await send(w, 'PATCH', url, { content: 'v2' }, [{ field: 'files[0]', filename: 'new.txt', data: 'new' }]);
      expect(added.statusCode, added.body).toBe(200);
      expect(added.json().attachments.map((a: { filename: string }) => a.filename)).toEqual(['old.txt', 'new.txt']);
      const kept = await call(t, 'PATCH', url, { content: 'v3', attachments: [{ id: added.json().attachments[1].id }] });
      expect(kept.statusCode, kept.body).toBe(200);
      expect(kept.json().attachments.map((a: { filename: string }) => a.filename)).toEqual(['new.txt']);
      expect((await fetchFile(old.url)).statusCode).toBe(404);
      // discord.py's edit(attachments=[]): only the files change; the content stays.
      const cleared = await call(t, 'PATCH', url, { attachments: [] });
      expect(cleared.statusCode, cleared.body).toBe(200);
      expect(cleared.json()).toMatchObject({ content: 'v3', attachments: [] });
    });

    it('the channel view shows an image inline at its reserved size with its description as alt text, and other files as download cards', async () => {
      const { agent, person: owner } = await given.signedIn(t);
      const made = await given.server(t, { owner });
      const w = await given.webhook(t, { channel: made.channels[0] });
      const res = await send(w, 'POST', `${w.path}?wait=true`, { content: 'nightly', attachments: [{ id: 0, description: 'Error rate, last 24 h' }] }, [
        { field: 'files[0]', filename: 'errors.png', type: 'image/png', data: pngHeader(800, 400) },
        { field: 'files[1]', filename: 'report.pdf', type: 'application/pdf', data: Buffer.alloc(2500, 1) },
      ]);
      expect(res.statusCode, res.body).toBe(200);
      const page = await agent.get(`/channels/${w.channel.id}`);
      expect(page.statusCode).toBe(200);
      const img = /<li class="file-image"><a href="([^"]+)"[^>]*><img src="([^"]+)" alt="([^"]*)" width="(\d+)" height="(\d+)"/.exec(page.body);
      expect(img, 'an inline image').not.toBeNull();
      const [, href, src, alt, width, height] = img as RegExpExecArray;
      expect(alt).toBe('Error rate, last 24 h');
      // 800×400 scaled to the view's 400 px width, the ratio kept.
      expect([width, height]).toEqual(['400', '200']);
      expect(src).toBe(href);
      expect((await t.app.inject({ method: 'GET', url: (src as string).replaceAll('&amp;', '&') })).statusCode).toBe(200);
      expect(page.body).toMatch(/<li class="file-card"><a href="\/attachments\/[^"]+" download="report.pdf"><span class="file-name">report.pdf<\/span> <span class="small muted">2.5 kB<\/span><\/a>/);
    });

    if (store === 'postgres') it('a file uploaded through one instance is served by another on the same database', async () => {
      // Two instances of their own, with the default 25 MiB limit, so the file spans several chunks.
      const first = await createTestApp({ env: { GATEHOUSE_FILE_STORE: 'postgres' } });
      const other = await createTestApp({ sameDatabaseAs: first, clock: first.clock, env: { GATEHOUSE_FILE_STORE: 'postgres' } });
      try {
        const w = await createTestWebhook(first);
        const data = Buffer.from(Array.from({ length: 700_000 }, (_, i) => (i * 7) % 256));
        const body = await multipartBody({ payload_json: JSON.stringify({ content: 'shared' }) }, [{ field: 'files[0]', filename: 'big.bin', data }]);
        const res = await first.app.inject({ method: 'POST', url: `${w.path}?wait=true`, remoteAddress: nextAddress(), ...body });
        expect(res.statusCode, res.body).toBe(200);
        const u = new URL(res.json().attachments[0].url);
        const whole = await other.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
        expect(whole.statusCode).toBe(200);
        expect(whole.rawPayload.equals(data)).toBe(true);
        // A range across a chunk boundary (256 KiB) comes back exact.
        const part = await other.app.inject({ method: 'GET', url: `${u.pathname}${u.search}`, headers: { range: 'bytes=262000-525000' } });
        expect(part.statusCode).toBe(206);
        expect(part.rawPayload.equals(data.subarray(262000, 525001))).toBe(true);
      } finally {
        await other.close();
        await first.close();
      }
    });

    it('deleting a message removes its files at once; a deleted channel’s files go with the maintenance sweep', async () => {
      const w = await createTestWebhook(t);
      const posted = (await send(w, 'POST', `${w.path}?wait=true`, { content: 'doomed' }, [{ field: 'files[0]', filename: 'a.txt', data: 'a' }])).json();
      const before = await stored();
      expect((await call(t, 'DELETE', `${w.path}/messages/${posted.id}`)).statusCode).toBe(204);
      expect(await stored()).toEqual({ rows: before.rows - 1, blobs: before.blobs - 1 });
      expect((await fetchFile(posted.attachments[0].url)).statusCode).toBe(404);

      const w2 = await createTestWebhook(t);
      const second = (await send(w2, 'POST', `${w2.path}?wait=true`, { content: 'channel goes' }, [{ field: 'files[0]', filename: 'b.txt', data: 'b' }])).json();
      const mid = await stored();
      await deleteChannel(t.services, actingOf(person(w2.webhook.creatorId)), w2.webhook.serverId, w2.channel.id);
      // Not before the grace period (a request may still be storing its files)…
      await sweepOrphanFiles(t.services, t.clock.now(), 100);
      expect(await stored()).toEqual(mid);
      t.clock.advance(2 * 60 * 60 * 1000);
      await sweepOrphanFiles(t.services, t.clock.now(), 100);
      expect(await stored()).toEqual({ rows: mid.rows - 1, blobs: mid.blobs - 1 });
      expect((await fetchFile(second.attachments[0].url)).statusCode).toBe(404);
    });
  });
}
