import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { s256Challenge } from '../../src/modules/oauth/pkce.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/database.js';
import { startRoundRobinProxy, UPSTREAM_HEADER, type RoundRobinProxy } from '../support/round-robin-proxy.js';
import { cliQuote, freshPostgresDatabase, seedViaCli, startServer, type ServerProcess } from '../support/server-process.js';
import { SseReader } from '../support/sse.js';

/**
 * Issue #7 §3, scale-out: three instances of the built server (`node dist/src/main.js`) share one
 * PostgreSQL database and one Redis behind a round-robin proxy (test/support/round-robin-proxy.ts),
 * all with GATEHOUSE_BASE_URL = the proxy's address and TRUST_PROXY=127.0.0.1, as behind a real
 * load balancer. Everything goes through the proxy, and consecutive requests land on different
 * instances: sign-up and sign-in, the OAuth flow, a bot install, the webhook suite with its shared
 * rate limit, and a live channel view fed by writes on other instances (Redis fan-out).
 *
 * Needs TEST_DATABASE_URL and TEST_REDIS_URL (skipped with a printed reason otherwise). CI runs
 * one OAuth round and 3 live messages; GATEHOUSE_FULL=1 runs 5 OAuth rounds and 20 live messages.
 */

const FULL = process.env['GATEHOUSE_FULL'] === '1';
const OAUTH_ROUNDS = FULL ? 5 : 1;
const LIVE_MESSAGES = FULL ? 20 : 3;
const INSTANCES = 3;

const canRun = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);
if (!canRun) {
  console.warn('test/reliability/scale-out.test.ts: the three-instance test is skipped: it needs TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (Redis), e.g. TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test TEST_REDIS_URL=redis://127.0.0.1:6379');
}

// ---------------------------------------------------------------------------------------------
// The proxy itself: what the scale-out test relies on, checked against plain node:http upstreams.
// ---------------------------------------------------------------------------------------------

interface Upstream {
  url: string;
  seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  server: Server;
}

/** A plain upstream: echoes what it received as JSON; /events streams until `release` is called. */
async function plainUpstream(name: string, hooks: { streamClosed?: () => void; release?: Promise<void> } = {}): Promise<Upstream> {
  const seen: Upstream['seen'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'set-cookie': ['a=1', 'b=2'] });
        res.write('event: first\ndata: before release\n\n');
        res.on('close', () => hooks.streamClosed?.());
        void hooks.release?.then(() => res.end('event: second\ndata: after release\n\n'));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive, x-private', 'x-private': 'hop', 'set-cookie': ['a=1', 'b=2'] });
      res.end(JSON.stringify({ name, method: req.method, url: req.url, body: Buffer.concat(chunks).toString('utf8') }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('the round-robin proxy of the scale-out test', () => {
  it('sends requests to the upstreams in turn, streams bodies both ways, sets X-Forwarded-* and names the upstream', async () => {
    const upstreams = await Promise.all(['a', 'b', 'c'].map((n) => plainUpstream(n)));
    const proxy = await startRoundRobinProxy({ upstreams: upstreams.map((u) => u.url) });
    try {
      const names: string[] = [];
      const served: (string | null)[] = [];
      for (let i = 0; i < 6; i += 1) {
        const response = await fetch(`${proxy.url}/echo?i=${i}`, { method: 'POST', body: `payload ${i}`, headers: { 'x-forwarded-for': '203.0.113.5' } });
        const body = (await response.json()) as { name: string; body: string; url: string };
        names.push(body.name);
        served.push(response.headers.get(UPSTREAM_HEADER));
        expect(body.body).toBe(`payload ${i}`);
        expect(body.url).toBe(`/echo?i=${i}`);
        expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
        // Hop-by-hop headers, and those the Connection header names, stay on their hop.
        expect(response.headers.get('x-private')).toBeNull();
      }
      expect(names).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
      expect(served).toEqual(['0', '1', '2', '0', '1', '2']);
      expect(proxy.counts()).toEqual([2, 2, 2]);
      expect(proxy.requests.map((r) => r.path)).toEqual(Array(6).fill('/echo'));

      const headers = upstreams[0]!.seen[0]!.headers;
      expect(headers['x-forwarded-for']).toBe('203.0.113.5, 127.0.0.1');
      expect(headers['x-forwarded-proto']).toBe('http');
      expect(headers['x-forwarded-host']).toBe(`127.0.0.1:${proxy.port}`);
      expect(headers.host).toBe(`127.0.0.1:${proxy.port}`);
    } finally {
      await proxy.close();
      await Promise.all(upstreams.map((u) => closeServer(u.server)));
    }
  });

  it('passes an event stream through unbuffered and closes the upstream when the client leaves', async () => {
    let release!: () => void;
    const upstream = await plainUpstream('sse', { release: new Promise<void>((resolve) => (release = resolve)) });
    let heldClosed!: () => void;
    const heldClosedPromise = new Promise<void>((resolve) => (heldClosed = resolve));
    const held = await plainUpstream('held', { release: new Promise<void>(() => undefined), streamClosed: () => heldClosed() });
    const proxy = await startRoundRobinProxy({ upstreams: [upstream.url] });
    try {
      const stream = await SseReader.open(`${proxy.url}/events`);
      expect(stream.response.headers.get('content-type')).toBe('text/event-stream');
      // The upstream has not ended its response: this event can only arrive if nothing buffers it.
      expect((await stream.next((e) => e.event === 'first', 2000)).data).toBe('before release');
      release();
      expect((await stream.next((e) => e.event === 'second', 2000)).data).toBe('after release');

      // A stream the upstream never ends: when the client leaves, the proxy ends its upstream request.
      proxy.setUpstreams([held.url]);
      const open = await SseReader.open(`${proxy.url}/events`);
      await open.next((e) => e.event === 'first', 2000);
      let closedInTime = false;
      open.close();
      await Promise.race([heldClosedPromise.then(() => (closedInTime = true)), new Promise((r) => setTimeout(r, 2000))]);
      expect(closedInTime).toBe(true);
    } finally {
      await proxy.close();
      await closeServer(upstream.server);
      await closeServer(held.server);
    }
  });

  it('answers 502 when an upstream is down and goes on with the others', async () => {
    const up = await plainUpstream('up');
    const down = await plainUpstream('down');
    await closeServer(down.server);
    const proxy = await startRoundRobinProxy({ upstreams: [up.url, down.url] });
    try {
      const first = await fetch(`${proxy.url}/x`);
      expect(first.status).toBe(200);
      const second = await fetch(`${proxy.url}/x`);
      expect(second.status).toBe(502);
      expect(second.headers.get(UPSTREAM_HEADER)).toBe('1');
      expect(await second.text()).toContain('502 Bad Gateway');
      expect((await fetch(`${proxy.url}/x`)).status).toBe(200);
      expect(proxy.requests.map((r) => r.status)).toEqual([200, 502, 200]);
    } finally {
      await proxy.close();
      await closeServer(up.server);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Three instances behind the proxy.
// ---------------------------------------------------------------------------------------------

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  upstream: number;
}

/** `&amp;` and friends, as the html template escapes attribute values. */
function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (_m, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`' })[name] ?? '');
}

/** The fields a browser would submit from the form posting to `action`: hidden inputs and ticked boxes. */
function formFields(markup: string, action: string): [string, string][] {
  const start = markup.indexOf(`<form method="post" action="${action}"`);
  if (start < 0) throw new Error(`no form posting to ${action} on the page`);
  const form = markup.slice(start, markup.indexOf('</form>', start));
  const fields: [string, string][] = [];
  for (const match of form.matchAll(/<input ([^>]*)>/g)) {
    const attrs = match[1] as string;
    const name = /name="([^"]*)"/.exec(attrs)?.[1];
    const value = /value="([^"]*)"/.exec(attrs)?.[1] ?? '';
    if (!name) continue;
    if (/type="hidden"/.test(attrs) || (/type="checkbox"/.test(attrs) && /\bchecked\b/.test(attrs))) fields.push([unescapeHtml(name), unescapeHtml(value)]);
  }
  return fields;
}

/**
 * A client of the proxy: a cookie jar (a person's browser) and the upstream that served each
 * answer, checked against the previous one on every request: round robin means a different
 * instance answers each time.
 */
class ProxyClient {
  readonly cookies = new Map<string, string>();
  previousUpstream: number | undefined;
  requests = 0;

  constructor(readonly base: string) {}

  /** Records that another request (a stream, a concurrent batch) took the last turn. */
  tookTurn(upstream: number): void {
    this.previousUpstream = upstream;
  }

  async send(method: string, path: string, options: { headers?: Record<string, string>; form?: [string, string][] | Record<string, string>; json?: unknown; cookies?: boolean } = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    const useCookies = options.cookies ?? true;
    if (useCookies && this.cookies.size > 0) headers['cookie'] = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (options.form) {
      body = new URLSearchParams(Array.isArray(options.form) ? options.form : Object.entries(options.form)).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
      // A browser sends the page's origin with a form post; it must equal GATEHOUSE_BASE_URL.
      headers['origin'] = this.base;
    } else if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(`${this.base}${path}`, { method, headers, body, redirect: 'manual' });
    const text = await response.text();
    if (useCookies) {
      for (const line of response.headers.getSetCookie()) {
        const [pair = '', ...attributes] = line.split(';');
        const eq = pair.indexOf('=');
        const name = pair.slice(0, eq).trim();
        const value = pair.slice(eq + 1).trim();
        const expired = value === '' || attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now()));
        if (expired) this.cookies.delete(name);
        else this.cookies.set(name, value);
      }
    }
    const upstream = Number(response.headers.get(UPSTREAM_HEADER));
    this.requests += 1;
    expect(upstream, `${method} ${path}: served by the same instance as the request before`).not.toBe(this.previousUpstream);
    this.previousUpstream = upstream;
    expect(response.status, `${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`).toBeLessThan(500);
    return { status: response.status, headers: response.headers, text, upstream };
  }

  /** GETs a page and posts its form (with the CSRF token it carries) plus `fields`. */
  async submit(pagePath: string, action: string, fields: Record<string, string>): Promise<Answer> {
    const page = await this.send('GET', pagePath);
    expect(page.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
    expect(csrf, `a CSRF token on ${pagePath}`).toBeDefined();
    return this.send('POST', action, { form: { ...fields, _csrf: csrf as string } });
  }
}

function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

function json<T>(answer: Answer): T {
  return JSON.parse(answer.text) as T;
}

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  token_type: string;
  scope: string;
}

describe.skipIf(!canRun)('three instances behind a round-robin proxy, on one PostgreSQL and one Redis', () => {
  let database: { url: string; drop(): Promise<void> };
  let proxy: RoundRobinProxy;
  const instances: ServerProcess[] = [];
  let client: ProxyClient;
  let redis: Redis;
  const timings: Record<string, number> = {};
  const summary: string[] = [];
  let startupLine = '';

  /** Runs `work` and records how long it took under `name`. */
  async function timed<T>(name: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      timings[name] = Math.round(performance.now() - started);
    }
  }

  // Filled in as the steps run; later steps use what earlier ones made.
  const person = { username: `ada${Date.now().toString(36)}`, password: 'correct horse battery staple' };
  let serverId = '';
  let channelId = '';
  let bot = { appId: '', botToken: '' };
  let webhookUrl = '';

  beforeAll(async () => {
    const started = performance.now();
    database = await freshPostgresDatabase();
    // The proxy first: its address is every instance's GATEHOUSE_BASE_URL.
    proxy = await startRoundRobinProxy();
    // Started at the same moment: each runs the migrations at start-up, and Kysely's migration
    // lock (a PostgreSQL advisory lock) lets exactly one apply them while the others wait.
    const starts = await Promise.allSettled(
      Array.from({ length: INSTANCES }, () => startServer({ databaseUrl: database.url, redisUrl: TEST_REDIS_URL as string, env: { GATEHOUSE_BASE_URL: proxy.url, TRUST_PROXY: '127.0.0.1' } })),
    );
    // Those that did start are stopped in afterAll even when another failed.
    for (const start of starts) if (start.status === 'fulfilled') instances.push(start.value);
    const failed = starts.find((start) => start.status === 'rejected');
    if (failed) throw failed.reason;
    proxy.setUpstreams(instances.map((i) => i.baseUrl));
    client = new ProxyClient(proxy.url);
    redis = new Redis(TEST_REDIS_URL as string, { maxRetriesPerRequest: 1 });
    startupLine = `${Math.round(performance.now() - started)} ms for the database and 3 concurrent instances (${instances.map((i) => `${Math.round(i.startupMs)} ms, worker ${String(i.listening['workerId'])}`).join('; ')})`;
  });

  afterAll(async () => {
    redis?.disconnect();
    const codes = await Promise.all(instances.map((i) => i.stop()));
    await proxy?.close();
    await database?.drop();
    if (!proxy) return;
    const perInstance = proxy.counts();
    const statuses = new Map<number, number>();
    for (const r of proxy.requests) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    const headerTimes = proxy.requests.map((r) => r.headersMs).sort((a, b) => a - b);
    const pct = (p: number) => (headerTimes.length ? (headerTimes[Math.min(headerTimes.length - 1, Math.floor((p / 100) * headerTimes.length))] as number).toFixed(1) : '-');
    console.log(
      [
        `scale-out (${FULL ? 'full' : 'CI'} counts): ${INSTANCES} instances on PostgreSQL + Redis behind the round-robin proxy`,
        `  start-up: ${startupLine}`,
        `  requests through the proxy: ${proxy.requests.length}; per instance: ${perInstance.join(' / ')}`,
        `  statuses: ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(', ')}`,
        `  time to response headers: p50 ${pct(50)} ms, p95 ${pct(95)} ms, max ${pct(100)} ms`,
        `  steps (ms): ${Object.entries(timings).map(([k, v]) => `${k} ${v}`).join(', ')}`,
        ...summary.map((s) => `  ${s}`),
        `  instances exited with ${codes.join(', ')}`,
      ].join('\n'),
    );
  });

  it('all three instances are up, each with its own snowflake worker id, and the proxy addresses them all', async () => {
    expect(instances).toHaveLength(INSTANCES);
    const workerIds = new Set(instances.map((i) => i.listening['workerId']));
    expect(workerIds.size).toBe(INSTANCES);
    // Exactly one instance applied the migrations; the others found nothing left to do.
    const migrated = instances.filter((i) => i.logs.some((l) => l.includes('"msg":"database migrated"')));
    expect(migrated).toHaveLength(1);
    for (let i = 0; i < INSTANCES; i += 1) {
      const ready = await client.send('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.upstream).toBe(i);
    }
  });

  it('honours X-Forwarded-For from the trusted proxy (TRUST_PROXY=127.0.0.1): the client address reaches the logs', async () => {
    const answer = await client.send('GET', '/healthz', { headers: { 'x-forwarded-for': '203.0.113.77' } });
    expect(answer.status).toBe(200);
    const logs = instances[answer.upstream]!.logs;
    await expect.poll(() => logs.some((l) => l.includes('"ip":"203.0.113.77"'))).toBe(true);
  });

  it('people: sign up and sign in with the page forms, the session working on whichever instance answers', async () => {
    await timed('people', async () => {
      // The form comes from one instance and is posted to the next: the CSRF token (keyed by the
      // pre-session cookie, no instance secret) is valid on every instance.
      const signedUp = await client.submit('/register', '/register', { username: person.username, name: 'Ada Lovelace', email: `${person.username}@example.com`, password: person.password });
      expect(signedUp.status).toBe(303);
      expect(client.cookies.has('gh_session')).toBe(true);

      const seen = new Set<number>();
      for (let i = 0; i < INSTANCES; i += 1) {
        const home = await client.send('GET', '/settings/profile');
        expect(home.status).toBe(200);
        expect(home.text).toContain(`@${person.username}`);
        seen.add(home.upstream);
      }
      expect(seen.size).toBe(INSTANCES);

      const signOut = await client.submit('/settings/profile', '/logout', {});
      expect(signOut.status).toBe(303);
      expect(client.cookies.has('gh_session')).toBe(false);
      const out = await client.send('GET', '/settings/profile');
      expect(out.status).toBe(303);
      expect(out.headers.get('location')).toMatch(/^\/login/);

      const signedIn = await client.submit('/login', '/login', { username: person.username, password: person.password });
      expect(signedIn.status).toBe(303);
      seen.clear();
      for (let i = 0; i < INSTANCES; i += 1) {
        const page = await client.send('GET', '/settings/profile');
        expect(page.status).toBe(200);
        expect(page.text).toContain(`@${person.username}`);
        seen.add(page.upstream);
      }
      expect(seen.size).toBe(INSTANCES);
    });
  });

  it('OAuth: consent form, code exchange with PKCE, two refreshes, /users/@me, revocation → 401', async () => {
    await timed('oauth', async () => {
      const redirectUri = 'http://127.0.0.1:9/callback';
      const [app] = seedViaCli(database.url, [`apps create --owner ${person.username} --name ${cliQuote('Scale Out App')} --redirect-uri ${redirectUri}`]) as [{ client_id: string; client_secret: string }];
      const auth = basic(app.client_id, app.client_secret);

      for (let round = 0; round < OAUTH_ROUNDS; round += 1) {
        const verifier = `scale-out-verifier-${round}-${'x'.repeat(50)}`;
        const state = `state-${round}`;
        const query = new URLSearchParams({ response_type: 'code', client_id: app.client_id, redirect_uri: redirectUri, scope: 'identify', state, code_challenge: s256Challenge(verifier), code_challenge_method: 'S256' });
        const authorizeUrl = `/app/oauth2/authorize?${query.toString()}`;
        const consent = await client.send('GET', authorizeUrl);
        let location: string;
        if (consent.status === 200) {
          expect(consent.text).toContain('Scale Out App');
          const decided = await client.send('POST', '/app/oauth2/authorize', { form: [...formFields(consent.text, '/app/oauth2/authorize'), ['decision', 'authorize']] });
          expect(decided.status).toBe(303);
          location = decided.headers.get('location') ?? '';
        } else {
          // A later round: the person already consented to these scopes, so no screen (SPEC §2.1).
          expect(consent.status).toBe(302);
          location = consent.headers.get('location') ?? '';
        }
        const redirected = new URL(location);
        expect(`${redirected.origin}${redirected.pathname}`).toBe(redirectUri);
        expect(redirected.searchParams.get('state')).toBe(state);
        const code = redirected.searchParams.get('code') as string;

        const exchanged = await client.send('POST', '/api/oauth2/token', { cookies: false, headers: { authorization: auth }, form: { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier } });
        expect(exchanged.status).toBe(200);
        let tokens = json<TokenAnswer>(exchanged);
        expect(tokens.token_type).toBe('Bearer');

        for (let i = 0; i < 2; i += 1) {
          const refreshed = await client.send('POST', '/api/oauth2/token', { cookies: false, headers: { authorization: auth }, form: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token } });
          expect(refreshed.status).toBe(200);
          const next = json<TokenAnswer>(refreshed);
          expect(next.refresh_token).not.toBe(tokens.refresh_token);
          tokens = next;
        }

        const me = await client.send('GET', '/api/v1/users/@me', { cookies: false, headers: { authorization: `Bearer ${tokens.access_token}` } });
        expect(me.status).toBe(200);
        expect(json<{ username: string }>(me).username).toBe(person.username);

        const revoked = await client.send('POST', '/api/oauth2/token/revoke', { cookies: false, headers: { authorization: auth }, form: { token: tokens.access_token } });
        expect(revoked.status).toBe(200);
        // Checked on the two other instances too: revocation is a row, not a per-process cache.
        for (let i = 0; i < INSTANCES - 1; i += 1) {
          const after = await client.send('GET', '/api/v1/users/@me', { cookies: false, headers: { authorization: `Bearer ${tokens.access_token}` } });
          expect(after.status).toBe(401);
        }
        const refreshAfter = await client.send('POST', '/api/oauth2/token', { cookies: false, headers: { authorization: auth }, form: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token } });
        expect(refreshAfter.status).toBe(400);
        expect(json<{ error: string }>(refreshAfter).error).toBe('invalid_grant');
      }
      summary.push(`OAuth: ${OAUTH_ROUNDS} round(s) of consent → code + PKCE → 2 refreshes → @me → revoke → 401`);
    });
  });

  it('bot install: consent screen with scope bot and permissions; the bot joins with its managed role', async () => {
    await timed('bot install', async () => {
      const [server, app] = seedViaCli(database.url, [`servers create --owner ${person.username} --name ${cliQuote('Scale Out')}`, `apps create --owner ${person.username} --name ${cliQuote('Relay Bot')} --bot`]) as [
        { id: string; channels: { id: string; name: string }[] },
        { client_id: string; bot_token: string },
      ];
      serverId = server.id;
      channelId = (server.channels.find((c) => c.name === 'general') ?? server.channels[0])!.id;
      bot = { appId: app.client_id, botToken: app.bot_token };

      const permissions = Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.MANAGE_WEBHOOKS;
      const query = new URLSearchParams({ client_id: bot.appId, scope: 'bot', permissions: permissions.toString(), server_id: serverId });
      const consent = await client.send('GET', `/app/oauth2/authorize?${query.toString()}`);
      expect(consent.status).toBe(200);
      expect(consent.text).toContain('Add Relay Bot to a server');
      const fields = formFields(consent.text, '/app/oauth2/authorize');
      expect(fields.filter(([name]) => name === 'permission').map(([, v]) => v).sort()).toEqual(['MANAGE_WEBHOOKS', 'SEND_MESSAGES', 'VIEW_CHANNEL']);
      const installed = await client.send('POST', '/app/oauth2/authorize', { form: [...fields, ['decision', 'authorize']] });
      expect(installed.status).toBe(200);
      expect(installed.text).toContain('Relay Bot was added to Scale Out');

      const integrations = await client.send('GET', `/servers/${serverId}/settings/integrations`);
      expect(integrations.status).toBe(200);
      const entryStart = integrations.text.indexOf(`id="app-${bot.appId}"`);
      expect(entryStart).toBeGreaterThan(0);
      const entryEnd = integrations.text.indexOf('</li>', entryStart);
      expect(entryEnd).toBeGreaterThan(entryStart);
      const entry = integrations.text.slice(entryStart, entryEnd);
      for (const label of ['View channels', 'Send messages', 'Manage webhooks']) expect(entry).toContain(label);

      // The bot's own credentials work on every instance, with the role's permissions.
      for (let i = 0; i < INSTANCES; i += 1) {
        const list = await client.send('GET', `/api/v1/channels/${channelId}/webhooks`, { cookies: false, headers: { authorization: `Bot ${bot.botToken}` } });
        expect(list.status).toBe(200);
        expect(json<unknown[]>(list)).toEqual([]);
      }
    });
  });

  it('webhooks: the bot creates one; execute with wait, edit, delete; the 10-per-2-s bucket holds across instances', async () => {
    await timed('webhooks', async () => {
      const botAuth = { authorization: `Bot ${bot.botToken}` };
      const created = await client.send('POST', `/api/v1/channels/${channelId}/webhooks`, { cookies: false, headers: botAuth, json: { name: 'Deploys' } });
      expect(created.status).toBe(201);
      const webhook = json<{ id: string; token: string; url: string; channel_id: string }>(created);
      // Every instance builds webhook URLs from the same GATEHOUSE_BASE_URL: the proxy's.
      expect(webhook.url).toBe(`${proxy.url}/api/v1/webhooks/${webhook.id}/${webhook.token}`);
      webhookUrl = webhook.url;
      const path = new URL(webhookUrl).pathname;

      const posted = await client.send('POST', `${path}?wait=true`, { cookies: false, json: { content: 'Deploy started' } });
      expect(posted.status).toBe(200);
      const message = json<{ id: string; content: string; channel_id: string }>(posted);
      expect(message).toMatchObject({ content: 'Deploy started', channel_id: channelId });

      const edited = await client.send('PATCH', `${path}/messages/${message.id}`, { cookies: false, json: { content: 'Deploy finished' } });
      expect(edited.status).toBe(200);
      expect(json<{ content: string; edited_timestamp: string | null }>(edited)).toMatchObject({ content: 'Deploy finished', edited_timestamp: expect.any(String) });
      const fetched = await client.send('GET', `${path}/messages/${message.id}`, { cookies: false });
      expect(json<{ content: string }>(fetched).content).toBe('Deploy finished');
      const deleted = await client.send('DELETE', `${path}/messages/${message.id}`, { cookies: false });
      expect(deleted.status).toBe(204);
      const gone = await client.send('GET', `${path}/messages/${message.id}`, { cookies: false });
      expect(gone.status).toBe(404);

      // The bucket: a second webhook, so its window starts with this burst. 12 executes at once,
      // the proxy spreading them 4/4/4 over the instances: exactly 10 accepted across them.
      const second = json<{ id: string; token: string }>(await client.send('POST', `/api/v1/channels/${channelId}/webhooks`, { cookies: false, headers: botAuth, json: { name: 'Burst' } }));
      const before = proxy.requests.length;
      const burst = await Promise.all(
        Array.from({ length: 12 }, (_, i) => fetch(`${proxy.url}/api/v1/webhooks/${second.id}/${second.token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: `burst ${i}` }) })),
      );
      const statuses = burst.map((r) => r.status).sort();
      const limited = burst.filter((r) => r.status === 429);
      expect(statuses.filter((s) => s === 204)).toHaveLength(10);
      expect(limited).toHaveLength(2);
      for (const r of limited) {
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(r.headers.get('x-ratelimit-scope')).toBe('shared');
        expect(await r.json()).toMatchObject({ message: 'You are being rate limited.', global: false });
      }
      const burstUpstreams = proxy.requests.slice(before).map((r) => r.upstream);
      expect(new Set(burstUpstreams).size).toBe(INSTANCES);
      for (let i = 0; i < INSTANCES; i += 1) expect(burstUpstreams.filter((u) => u === i)).toHaveLength(12 / INSTANCES);
      const acceptedBy = burst.map((r) => (r.status === 204 ? Number(r.headers.get(UPSTREAM_HEADER)) : -1)).filter((u) => u >= 0);
      expect(new Set(acceptedBy).size).toBe(INSTANCES);
      client.tookTurn(proxy.requests.at(-1)!.upstream);

      // The channel holds exactly what was accepted, whichever instance reads it.
      const view = await client.send('GET', `/channels/${channelId}`);
      expect(view.status).toBe(200);
      expect(view.text.match(/burst \d+/g) ?? []).toHaveLength(10);
      summary.push(`webhook bucket: 12 concurrent executes spread ${INSTANCES} ways (${[0, 1, 2].map((i) => burstUpstreams.filter((u) => u === i).length).join('/')}) → ${statuses.filter((s) => s === 204).length} accepted, ${limited.length} × 429 with Retry-After ${limited.map((r) => r.headers.get('retry-after')).join(', ')}`);
    });
  });

  it('a webhook deleted through one instance is refused by every instance from the moment the DELETE is answered, though each had executed on it', async () => {
    await timed('webhook delete across instances', async () => {
      const botAuth = { authorization: `Bot ${bot.botToken}` };
      const gone = json<{ id: string; token: string }>(await client.send('POST', `/api/v1/channels/${channelId}/webhooks`, { cookies: false, headers: botAuth, json: { name: 'Doomed' } }));
      const url = `${proxy.url}/api/v1/webhooks/${gone.id}/${gone.token}`;
      const execute = (content: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content }) });
      // One execute per instance (the proxy takes them in turn): each instance has seen the webhook.
      const before = proxy.requests.length;
      for (let i = 0; i < INSTANCES; i += 1) expect((await execute(`doomed before ${i}`)).status).toBe(204);
      expect(new Set(proxy.requests.slice(before).map((r) => r.upstream)).size).toBe(INSTANCES);
      const deleted = await fetch(`${proxy.url}/api/v1/webhooks/${gone.id}`, { method: 'DELETE', headers: botAuth });
      expect(deleted.status).toBe(204);
      const after: number[] = [];
      for (let i = 0; i < INSTANCES; i += 1) after.push((await execute(`doomed after ${i}`)).status);
      expect(after).toEqual(Array.from({ length: INSTANCES }, () => 404));
      expect(new Set(proxy.requests.slice(-INSTANCES).map((r) => r.upstream)).size).toBe(INSTANCES);
      client.tookTurn(proxy.requests.at(-1)!.upstream);
      const view = await client.send('GET', `/channels/${channelId}`);
      expect(view.text.match(/doomed before \d/g) ?? []).toHaveLength(INSTANCES);
      expect(view.text).not.toContain('doomed after');
      summary.push(`webhook deleted across instances: ${INSTANCES} executes accepted before, then ${after.join('/')} on the ${INSTANCES} instances right after the DELETE`);
    });
  });

  it('live channel view: a stream on one instance receives messages written through the others (Redis fan-out)', async () => {
    await timed('live view', async () => {
      const path = new URL(webhookUrl).pathname;
      const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      const stream = await SseReader.open(`${proxy.url}/channels/${channelId}/events`, { cookie });
      try {
        expect(stream.response.status).toBe(200);
        expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
        const streamUpstream = Number(stream.response.headers.get(UPSTREAM_HEADER));
        client.tookTurn(streamUpstream);
        // The stream's instance has subscribed to the channel in Redis (no ?after= catch-up is
        // asked for, so every event below can only arrive through the fan-out).
        await expect.poll(async () => ((await redis.call('PUBSUB', 'NUMSUB', `gh:ch:${channelId}`)) as [string, number])[1], { timeout: 5000 }).toBeGreaterThanOrEqual(1);

        const latencies: number[] = [];
        const writers = new Set<number>();
        // Round robin's next turn is predictable: when it would be the stream's own instance, a
        // health check takes that turn, so every write below lands on one of the other two.
        const writeElsewhere = async () => {
          if (((client.previousUpstream ?? -1) + 1) % INSTANCES === streamUpstream) await client.send('GET', '/healthz', { cookies: false });
        };
        // The webhook's bucket (10 per 2 s) is shared with the step before: pace the writes.
        const pace = async (answer: Answer) => {
          if (Number(answer.headers.get('x-ratelimit-remaining')) === 0) await new Promise((r) => setTimeout(r, Number(answer.headers.get('x-ratelimit-reset-after')) * 1000 + 50));
        };
        for (let i = 0; i < LIVE_MESSAGES; i += 1) {
          await writeElsewhere();
          const sent = performance.now();
          const posted = await client.send('POST', `${path}?wait=true`, { cookies: false, json: { content: `live ${i}` } });
          expect(posted.status).toBe(200);
          expect(posted.upstream).not.toBe(streamUpstream);
          writers.add(posted.upstream);
          const id = json<{ id: string }>(posted).id;
          const event = await stream.next((e) => e.event === 'message' && e.id === id, 5000);
          latencies.push(performance.now() - sent);
          expect(event.data).toContain(`live ${i}`);
          await pace(posted);

          if (i === 0) {
            await writeElsewhere();
            const edited = await client.send('PATCH', `${path}/messages/${id}`, { cookies: false, json: { content: 'live 0, edited' } });
            expect(edited.status).toBe(200);
            writers.add(edited.upstream);
            expect((await stream.next((e) => e.event === 'message' && e.data.includes('live 0, edited'), 5000)).id).toBeUndefined();
            await pace(edited);
            await writeElsewhere();
            const removed = await client.send('DELETE', `${path}/messages/${id}`, { cookies: false });
            expect(removed.status).toBe(204);
            writers.add(removed.upstream);
            expect((await stream.next((e) => e.event === 'delete', 5000)).data).toBe(id);
            await pace(removed);
          }
        }
        expect(writers.has(streamUpstream)).toBe(false);
        expect(writers.size).toBe(INSTANCES - 1);
        latencies.sort((a, b) => a - b);
        summary.push(
          `live view: stream on instance ${streamUpstream}, ${LIVE_MESSAGES} messages (+1 edit, +1 delete) written on instances ${[...writers].sort().join(' and ')}; write-to-event p50 ${latencies[Math.floor(latencies.length / 2)]!.toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms`,
        );
      } finally {
        stream.close();
      }
    });
  });

  it('every request went through the proxy in turn: consecutive requests on different instances, all instances used', () => {
    const counts = proxy.counts();
    expect(counts.every((n) => n > 0)).toBe(true);
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    expect(proxy.requests.every((r) => r.status < 500)).toBe(true);
    for (const instance of instances) expect(instance.logs.filter((l) => l.includes('"level":50') || l.includes('"level":60'))).toEqual([]);
  });

  it('an instance is replaced (one step of a rolling upgrade): the others serve while it drains, and its successor serves the same session', async () => {
    await timed('replace an instance', async () => {
      const old = instances[INSTANCES - 1]!;
      // The load balancer stops routing to it first (docs/deployment.md), then it gets SIGTERM.
      proxy.setUpstreams(instances.slice(0, -1).map((i) => i.baseUrl));
      client.tookTurn(INSTANCES - 2); // the proxy's rotation restarts at 0
      const stopping = old.stop();
      for (let i = 0; i < 4; i += 1) {
        const page = await client.send('GET', '/settings/profile');
        expect(page.status).toBe(200);
        expect(page.upstream).toBeLessThan(INSTANCES - 1);
      }
      expect(await stopping).toBe(0);

      const successor = await startServer({ databaseUrl: database.url, redisUrl: TEST_REDIS_URL as string, env: { GATEHOUSE_BASE_URL: proxy.url, TRUST_PROXY: '127.0.0.1' } });
      instances[INSTANCES - 1] = successor;
      // Nothing left to migrate, and a worker id no live instance holds.
      expect(successor.logs.some((l) => l.includes('"msg":"database migrated"'))).toBe(false);
      expect(new Set(instances.map((i) => i.listening['workerId'])).size).toBe(INSTANCES);
      proxy.setUpstreams(instances.map((i) => i.baseUrl));
      client.tookTurn(INSTANCES - 1);
      const seen = new Set<number>();
      for (let i = 0; i < INSTANCES; i += 1) {
        const page = await client.send('GET', '/settings/profile');
        expect(page.status).toBe(200);
        expect(page.text).toContain(`@${person.username}`);
        seen.add(page.upstream);
        const hooks = await client.send('GET', `/api/v1/channels/${channelId}/webhooks`, { cookies: false, headers: { authorization: `Bot ${bot.botToken}` } });
        expect(json<unknown[]>(hooks)).toHaveLength(2);
      }
      expect(seen.size).toBe(INSTANCES);
      summary.push(`replacement: instance ${INSTANCES - 1} drained and exited 0 while the others served; its successor started in ${Math.round(successor.startupMs)} ms (worker ${String(successor.listening['workerId'])}) and served the same session and bot token`);
    });
  });
});
