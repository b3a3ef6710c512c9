import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORM_FIELDS_MAX, JSON_DEPTH_MAX, PAGE_BODY_LIMIT, TOKEN_BODY_LIMIT } from '../../src/http/body-limits.js';
import { MESSAGE_BODY_LIMIT } from '../../src/modules/messages/message-body-limit.js';
import { MessageLimits } from '../../src/modules/messages/message-limits.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestWebhook } from './webhook-url.fixtures.js';

/**
 * Issue #21 §1: no request costs more than linear time in its size, and what a route reads is
 * bounded by what it needs. These tests check the answers to large and hostile inputs, never how
 * long they took (DESIGN §6): bench/adversarial.mjs measures the growth. On the code before the
 * issue, the 40,000-repeat form took minutes (this file's timeout catches it) and the other
 * oversized bodies were read in full and answered 400 or 403.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };
const TOKEN_PATHS = ['/api/oauth2/token', '/api/v1/oauth2/token', '/api/oauth2/token/revoke', '/api/v1/oauth2/token/revoke'];

const post = (url: string, headers: Record<string, string>, payload: string | Buffer, remoteAddress = '203.0.113.9') =>
  t.app.inject({ method: 'POST', url, headers, payload, remoteAddress });

/**
 * The most expensive encodings real clients use: every non-ASCII character as \u escapes, as
 * Python's json.dumps does (discord.py; 12 bytes an emoji), and every `/` as `\/`, as PHP's
 * json_encode does.
 */
const escapedJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/\//g, '\\/');

describe('token and revoke endpoints: a few KiB, a bounded field count, linear parsing (issue #21 §1)', () => {
  it('a form of one field repeated 40,000 times (117 KiB) gets 413 invalid_request on every token path', async () => {
    const body = Array.from({ length: 40_000 }, () => 'a=').join('&');
    expect(body.length).toBeGreaterThan(100 * 1024);
    for (const path of TOKEN_PATHS) {
      const res = await post(path, FORM, body);
      expect(res.statusCode, path).toBe(413);
      expect(res.json(), path).toEqual({ error: 'invalid_request', error_description: 'the request body is too large' });
      expect(res.headers['cache-control'], path).toBe('no-store');
    }
  });

  it('a body over TOKEN_BODY_LIMIT gets 413, one under it is read (RFC 6749 §3.2 parameters fit in a few KiB)', async () => {
    const over = `grant_type=authorization_code&code=${'a'.repeat(TOKEN_BODY_LIMIT)}`;
    expect((await post('/api/oauth2/token', FORM, over)).statusCode).toBe(413);
    const under = `grant_type=authorization_code&client_id=1&code=${'a'.repeat(TOKEN_BODY_LIMIT - 200)}`;
    const res = await post('/api/oauth2/token', FORM, under);
    expect(res.statusCode).not.toBe(413);
    expect(res.json().error).not.toBe('invalid_request');
  });

  it('a parameter repeated within the limits is still refused as RFC 6749 §3.2 requires, with the same error', async () => {
    const body = Array.from({ length: 200 }, () => 'code=x').join('&');
    for (const path of TOKEN_PATHS.slice(0, 2)) {
      const res = await post(path, FORM, `grant_type=authorization_code&${body}`);
      expect(res.statusCode, path).toBe(400);
      expect(res.json(), path).toEqual({ error: 'invalid_request', error_description: 'code must not be repeated' });
    }
    const revoke = await post('/api/oauth2/token/revoke', FORM, Array.from({ length: 200 }, () => 'token=x').join('&'));
    expect(revoke.json()).toEqual({ error: 'invalid_request', error_description: 'token must not be repeated' });
  });

  it(`a form of more than ${FORM_FIELDS_MAX} fields gets 400 invalid_request naming the bound`, async () => {
    const body = Array.from({ length: FORM_FIELDS_MAX + 1 }, (_, i) => `f${i}=1`).join('&');
    expect(body.length).toBeLessThan(TOKEN_BODY_LIMIT);
    for (const path of TOKEN_PATHS) {
      const res = await post(path, FORM, body);
      expect(res.statusCode, path).toBe(400);
      expect(res.json(), path).toEqual({ error: 'invalid_request', error_description: `the request has more than ${FORM_FIELDS_MAX} parameters` });
    }
  });
});

describe('pages take only small form bodies, refused before any session or CSRF check (issue #21 §1)', () => {
  it('JSON to a page gets 415 with an HTML page, however deep or large', async () => {
    const deep = '['.repeat(500_000) + ']'.repeat(500_000);
    for (const payload of ['{"username":"a","password":"b"}', deep]) {
      const res = await post('/login', JSON_TYPE, payload);
      expect(res.statusCode).toBe(415);
      expect(res.body).toMatch(/<!doctype html>/i);
    }
  });

  it('a form over PAGE_BODY_LIMIT gets 413 with an HTML page', async () => {
    const res = await post('/login', FORM, `username=${'a'.repeat(PAGE_BODY_LIMIT)}`);
    expect(res.statusCode).toBe(413);
    expect(res.body).toMatch(/<!doctype html>/i);
    expect(res.body).toContain('Request entity too large');
  });

  it(`a form of more than ${FORM_FIELDS_MAX} fields gets 400`, async () => {
    const res = await post('/login', FORM, Array.from({ length: FORM_FIELDS_MAX + 1 }, (_, i) => `f${i}=1`).join('&'));
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/<!doctype html>/i);
  });
});

describe('webhook execute reads what the largest real message needs, and no deeper JSON than it (issue #21 §1)', () => {
  /**
   * The largest payload the limits allow, encoded the most expensive way a real client does:
   * 2000 emoji of content and 6000 over 10 embeds, every one as a \u surrogate pair, and every
   * URL at 2048 characters.
   */
  function largestMessage(): string {
    const emoji = (n: number) => '😀'.repeat(n);
    const url = (tag: string) => `https://img.example/${tag}${'/'.repeat(MessageLimits.url - 20 - tag.length)}`;
    const perEmbed = MessageLimits.embedTotal / MessageLimits.embeds;
    const embeds = Array.from({ length: MessageLimits.embeds }, (_, i) => ({
      title: emoji(100),
      description: emoji(perEmbed - 100 - 50 - 25),
      url: url(`u${i}`),
      image: { url: url(`i${i}`) },
      thumbnail: { url: url(`t${i}`) },
      author: { name: emoji(25), url: url(`a${i}`), icon_url: url(`c${i}`) },
      footer: { text: emoji(50), icon_url: url(`f${i}`) },
      fields: [],
    }));
    return escapedJson({ content: emoji(MessageLimits.content), username: 'Release bot', avatar_url: url('avatar'), tts: false, allowed_mentions: { parse: [] }, embeds });
  }

  it('the largest message a client can send, escaped the most expensive way clients escape, is posted', async () => {
    const w = await createTestWebhook(t);
    const payload = largestMessage();
    expect(payload.length).toBeGreaterThan(MESSAGE_BODY_LIMIT / 2);
    expect(payload.length).toBeLessThanOrEqual(MESSAGE_BODY_LIMIT);
    const res = await post(`${w.path}?wait=true`, JSON_TYPE, payload);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.json().embeds).toHaveLength(MessageLimits.embeds);
  });

  it('a body over MESSAGE_BODY_LIMIT gets 413 (40005) on execute and on editing a message', async () => {
    const w = await createTestWebhook(t);
    const over = JSON.stringify({ content: 'x', nonce: 'n'.repeat(MESSAGE_BODY_LIMIT) });
    const res = await post(w.path, JSON_TYPE, over);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ code: 40005, message: 'Request entity too large' });
    const posted = await post(`${w.path}?wait=true`, JSON_TYPE, JSON.stringify({ content: 'first' }));
    const edit = await t.app.inject({ method: 'PATCH', url: `${w.path}/messages/${posted.json().id}`, headers: JSON_TYPE, payload: over });
    expect(edit.statusCode).toBe(413);
  });

  it(`JSON nested deeper than ${JSON_DEPTH_MAX} levels gets 400 (50109) before it is parsed; ${JSON_DEPTH_MAX} levels are accepted`, async () => {
    const w = await createTestWebhook(t);
    const nest = (depth: number) => `{"content":"deep","nonce":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    const deep = await post(w.path, JSON_TYPE, nest(JSON_DEPTH_MAX + 1));
    expect(deep.statusCode).toBe(400);
    expect(deep.json()).toEqual({ code: 50109, message: 'The request body contains invalid JSON.' });
    // 200,000 levels: refused the same way, without recursion in the parser.
    const deeper = await post(w.path, JSON_TYPE, nest(200_000));
    expect(deeper.statusCode).toBe(400);
    expect(deeper.json().code).toBe(50109);
    expect((await post(w.path, JSON_TYPE, nest(JSON_DEPTH_MAX))).statusCode).toBe(204);
  });

  it('brackets inside JSON strings do not count as nesting', async () => {
    const w = await createTestWebhook(t);
    const res = await post(`${w.path}?wait=true`, JSON_TYPE, JSON.stringify({ content: `[{"\\${'['.repeat(1000)}` }));
    expect(res.statusCode).toBe(200);
    expect(res.json().content).toBe(`[{"\\${'['.repeat(1000)}`);
  });

  it('deep JSON gets 400 on the other JSON routes too', async () => {
    const res = await post('/api/v1/applications/1/emojis', { ...JSON_TYPE, authorization: 'Bot x' }, '['.repeat(100_000) + ']'.repeat(100_000));
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(50109);
  });
});

describe('slow requests are ended (issue #21 §1: request and header timeouts)', () => {
  let slow: TestApp;
  let port: number;
  beforeAll(async () => {
    slow = await createTestApp({ env: { GATEHOUSE_REQUEST_TIMEOUT_MS: '1000', GATEHOUSE_HEADERS_TIMEOUT_MS: '1000' } });
    await slow.app.listen({ port: 0, host: '127.0.0.1' });
    port = (slow.app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => slow.close());

  /** Opens a connection, sends `head`, then a byte every 200 ms; resolves with what the server said when it closed. */
  function trickle(head: string, byte: string): Promise<string> {
    return new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      let answer = '';
      const timer = setInterval(() => socket.writable && socket.write(byte), 200);
      socket.on('connect', () => socket.write(head));
      socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(timer);
        resolve(answer);
      });
    });
  }

  it('a body that trickles in is answered 408 and its connection closed', async () => {
    const answer = await trickle('POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n', 'a');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('headers that trickle in are answered 408 and the connection closed', async () => {
    const answer = await trickle('GET /healthz HTTP/1.1\r\nHost: x\r\n', 'X');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });
});
