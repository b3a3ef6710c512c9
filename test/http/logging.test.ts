import { connect, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loggerOptions, redactUrl } from '../../src/http/logging.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { PageAgent } from '../support/page-agent.js';

/** A pino logger with the production options, writing JSON lines into memory. */
function capturedLogger(level = 'trace') {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  return { logger: pino(loggerOptions(level), stream), lines, text: () => lines.join('\n') };
}

type LogLine = { reqId?: string; msg?: string; req?: { url?: string; method?: string }; res?: { statusCode?: number } };

describe('request logs', () => {
  let t: TestApp;
  let log: ReturnType<typeof capturedLogger>;
  beforeAll(async () => {
    log = capturedLogger();
    t = await createTestApp({ logger: log.logger });
  });
  afterAll(async () => t.close());
  beforeEach(() => {
    log.lines.length = 0;
  });

  const parsed = () => log.lines.map((line) => JSON.parse(line) as LogLine);

  it('are JSON lines with the request id, method, path and status, and the id is echoed in X-Request-Id', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-abc-123' } });
    expect(res.headers['x-request-id']).toBe('trace-abc-123');
    const lines = parsed().filter((l) => l.reqId === 'trace-abc-123');
    expect(lines.find((l) => l.msg === 'incoming request')?.req).toMatchObject({ method: 'GET', url: '/healthz' });
    expect(lines.find((l) => l.msg === 'request completed')?.res).toEqual({ statusCode: 200 });
  });

  it('generate a request id when the client sends none', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    const id = res.headers['x-request-id'];
    expect(typeof id).toBe('string');
    expect(parsed().some((l) => l.reqId === id && l.msg === 'request completed')).toBe(true);
  });

  it('never contain the Authorization header, cookies, or the token segment and query of a webhook URL', async () => {
    const token = 'whtok_S3cretWebhookToken_aaaaaaaaaaaaaaaa';
    const bearer = 'gha_BearerSecret_bbbbbbbbbbbbbbbbbbbb';
    const session = 'ghs_SessionCookie_cccccccccccccccccccc';
    for (const url of [`/api/v1/webhooks/123456/${token}?wait=true`, `/api/v1/webhooks/123456/${token}/messages/42`, `/api/webhooks/not-a-number/${token}`]) {
      await t.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${bearer}`, cookie: `gh_session=${session}; gh_anon=${session}`, 'content-type': 'application/json' },
        payload: { content: 'hello' },
      });
    }
    const text = log.text();
    expect(text).toContain('/api/v1/webhooks/123456/[REDACTED]?[REDACTED]');
    expect(text).toContain('/api/v1/webhooks/123456/[REDACTED]/messages/42');
    expect(text).toContain('/api/webhooks/not-a-number/[REDACTED]');
    for (const secret of [token, bearer, session, 'wait=true']) expect(text).not.toContain(secret);
  });

  it('issue #21 §5: never contain a webhook token sent in an absolute-form request line or percent-encoded: redaction follows the matched route', async () => {
    const token = 'whtok_AbsoluteFormSecret_eeeeeeeeeeeeeee';
    const encoded = token.replace(/e/g, '%65');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const lines = [
      `POST http://127.0.0.1:${port}/api/v1/webhooks/1/${encoded} HTTP/1.1`,
      `POST /api/v1/webhooks/1/${encoded}?wait=true HTTP/1.1`,
      `GET http://127.0.0.1:${port}/invite/ghinv_%41bsoluteInviteCode HTTP/1.1`,
      // No route: the raw-URL rules apply, after the same normalisation.
      `GET http://127.0.0.1:${port}/api/v1/webhooks/1/${encoded}/nowhere/x HTTP/1.1`,
      `GET http://127.0.0.1:${port}/api/v1/nowhere/gh%77t_AbsoluteFormSecret2 HTTP/1.1`,
    ];
    for (const line of lines) {
      await new Promise<void>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.end(`${line}\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 17\r\nConnection: close\r\n\r\n{"content":"hi"}`);
        });
        socket.on('data', () => undefined);
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
    }
    const text = log.text();
    expect(text).toContain('/api/v1/webhooks/1/[REDACTED]');
    for (const secret of [token, encoded, 'AbsoluteFormSecret', 'Absolut%65FormS%65cr%65t', 'bsoluteInviteCode', 'AbsoluteFormSecret2']) expect(text).not.toContain(secret);
  });

  it('never contain passwords sent in forms, whether the request succeeds, fails validation or is refused', async () => {
    const password = 'Pa55word_NeverLogged_dddddddd';
    const agent = new PageAgent(t.app);
    await agent.submit('/register', '/register', { username: 'logtester', name: 'Log Tester', email: '', password });
    await agent.postRaw('/login', { username: 'logtester', password }); // no CSRF token: refused
    await agent.submit('/login', '/login', { username: 'logtester', password: `${password}-wrong` });
    await agent.postRaw('/register', { username: ['a', 'b'], password }, { 'content-type': 'application/x-www-form-urlencoded' });
    await t.app.inject({ method: 'POST', url: '/api/oauth2/token', headers: { 'content-type': 'application/json' }, payload: `{"password":"${password}",` });
    const text = log.text();
    expect(text).toContain('"url":"/register"'); // the requests were logged…
    expect(text).not.toContain(password); // …their passwords were not
    expect(text).not.toContain('NeverLogged');
  });
});

describe('the logger configuration', () => {
  it('redacts secrets when code logs an object holding them, at any of the first levels', () => {
    const log = capturedLogger('info');
    log.logger.info(
      {
        headers: { authorization: 'Bot bot_tokenA', cookie: 'gh_session=cookieB', 'set-cookie': ['gh_session=cookieC'] },
        body: { password: 'pwD', client_secret: 'secE', refresh_token: 'rtF', code_verifier: 'cvG', username: 'alice' },
        person: { profile: { newPassword: 'pwH' } },
        token: 'tokI',
        err: { code: 'ECONNREFUSED' },
      },
      'something happened',
    );
    const text = log.text();
    for (const secret of ['bot_tokenA', 'cookieB', 'cookieC', 'pwD', 'secE', 'rtF', 'cvG', 'pwH', 'tokI']) expect(text).not.toContain(secret);
    expect(text).toContain('alice');
    expect(text).toContain('ECONNREFUSED'); // error codes stay readable
  });

  it('redactUrl keeps the route shape and drops the webhook token and every query string', () => {
    expect(redactUrl('/api/v1/webhooks/1/abc')).toBe('/api/v1/webhooks/1/[REDACTED]');
    expect(redactUrl('/api/v1/webhooks/1/abc/github?x=1')).toBe('/api/v1/webhooks/1/[REDACTED]/github?[REDACTED]');
    expect(redactUrl('/api/v1/webhooks/1')).toBe('/api/v1/webhooks/1');
    expect(redactUrl('/app/oauth2/authorize?client_id=1&state=s')).toBe('/app/oauth2/authorize?[REDACTED]');
    expect(redactUrl('/api/v1/channels/5/webhooks')).toBe('/api/v1/channels/5/webhooks');
  });

  it('redactUrl drops the code of an invite link: an invite code is a secret (found by the issue #7 log scan)', () => {
    expect(redactUrl('/invite/ghinv_t2LoUIxEAk6uN55dNncUag')).toBe('/invite/[REDACTED]');
    expect(redactUrl('/invite/ghinv_t2LoUIxEAk6uN55dNncUag?x=1')).toBe('/invite/[REDACTED]?[REDACTED]');
    expect(redactUrl('/servers/1/invites')).toBe('/servers/1/invites');
  });

  it('redactUrl drops any issued secret pasted into the wrong place of a path (found by the CI log scan of the fuzzer)', () => {
    expect(redactUrl('/api/v1/channels/ghwt_yiCgS4Ka8EfcN-lL3W-yzNys48AnKeeUyygLL6xT4kE/webhooks')).toBe('/api/v1/channels/[REDACTED]/webhooks');
    expect(redactUrl('/servers/ghinv_I8FTJfJOJniJiP8oy9xr-A/members/1/remove')).toBe('/servers/[REDACTED]/members/1/remove');
    expect(redactUrl('/api/v1/webhooks/1/[x]/messages/ghat_abcdefghijklmnop')).toBe('/api/v1/webhooks/1/[REDACTED]/messages/[REDACTED]');
    for (const prefix of ['ghs', 'ghcs', 'ghac', 'ghat', 'ghrt', 'ghbt', 'ghwt', 'ghinv']) {
      expect(redactUrl(`/a/${prefix}_0123456789abcdef/b`)).toBe('/a/[REDACTED]/b');
    }
    // Ordinary paths and short look-alikes stay readable.
    expect(redactUrl('/channels/123/settings/integrations')).toBe('/channels/123/settings/integrations');
    expect(redactUrl('/users/ghost_writer')).toBe('/users/ghost_writer');
  });
});

describe('the access log at the default level (issue #26 §0)', () => {
  let t: TestApp;
  let log: ReturnType<typeof capturedLogger>;
  beforeAll(async () => {
    log = capturedLogger('info');
    t = await createTestApp({ logger: log.logger });
  });
  afterAll(async () => t.close());

  it('writes exactly one line per request: request id, method, redacted route, status and time', async () => {
    log.lines.length = 0;
    const token = 'whtok_OneLinePerRequest_ffffffffffffffff';
    await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/123456/${token}?wait=true`, headers: { 'x-request-id': 'one-line-1', 'content-type': 'application/json' }, payload: { content: 'x' } });
    await t.app.inject({ method: 'GET', url: '/no/such/route', headers: { 'x-request-id': 'one-line-2' } });
    const lines = log.lines.map((line) => JSON.parse(line) as LogLine & { responseTime?: number; level?: number });
    const first = lines.filter((l) => l.reqId === 'one-line-1');
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ level: 30, msg: 'request completed', req: { method: 'POST', url: '/api/v1/webhooks/123456/[REDACTED]?[REDACTED]' }, res: { statusCode: 404 } });
    expect(typeof first[0]?.responseTime).toBe('number');
    const second = lines.filter((l) => l.reqId === 'one-line-2');
    expect(second).toHaveLength(1);
    expect(second[0]).toMatchObject({ req: { method: 'GET', url: '/no/such/route' }, res: { statusCode: 404 } });
    expect(log.text()).not.toContain(token);
  });

  it('the access line is the JSON pino writes for the same fields, in its order, with a client-chosen request id escaped', async () => {
    log.lines.length = 0;
    const reqId = 'quote " backslash \\ é \u2028 end';
    await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': reqId } });
    const written = log.lines.find((line) => line.includes('"request completed"'));
    expect(written).toBeDefined();
    const parsed = JSON.parse(written as string) as Record<string, unknown>;
    expect(parsed['reqId']).toBe(reqId);
    // pino's own line for the same record, through a logger with the same options and bindings.
    const same = capturedLogger('info');
    same.logger.info({ reqId: parsed['reqId'], req: parsed['req'], res: parsed['res'], responseTime: parsed['responseTime'] }, 'request completed');
    const reference = JSON.parse(same.lines[0] as string) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(Object.keys(reference));
    expect({ ...parsed, time: 0 }).toEqual({ ...reference, time: 0 });
    expect(typeof parsed['time']).toBe('number');
  });
});
