import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/http/app-type.js';
import { createMetrics, installRequestMetrics } from '../../src/http/metrics.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { sample } from '../support/metrics.js';
import { testDialect } from '../support/database.js';
import { call, createTestWebhook } from './webhook-url.fixtures.js';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from '../../src/storage/database.js';
import { freePort } from '../support/dedicated-services.js';

describe('operations endpoints', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('/healthz answers while the process runs', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('/readyz reports the database reachable', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ database: 'ok' });
  });

  it('an unknown route under /api answers a JSON 404 with code 0', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: 0, message: '404: Not Found' });
  });

  it('an unknown page answers an HTML 404 with security headers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/no/such/page' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.body).toContain('Page not found');
  });
});

describe('security headers: documents and API answers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  /** Helmet's headers that govern only documents: a JSON answer does without them (src/http/security-headers.ts). */
  const DOCUMENT_ONLY = ['cross-origin-opener-policy', 'cross-origin-resource-policy', 'origin-agent-cluster', 'x-dns-prefetch-control', 'x-download-options', 'x-permitted-cross-domain-policies', 'x-xss-protection'];

  it('an API answer carries a CSP that loads and frames nothing, nosniff, DENY and no-referrer, and none of the document-only headers', async () => {
    for (const url of ['/api/v1/users/@me', '/api/v1/nothing-here', '/.well-known/oauth-authorization-server', '/api/openapi.json']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.headers['content-type'], url).toContain('application/json');
      expect(res.headers['content-security-policy'], url).toBe("default-src 'none'; frame-ancestors 'none'");
      expect([res.headers['x-content-type-options'], res.headers['x-frame-options'], res.headers['referrer-policy']], url).toEqual(['nosniff', 'DENY', 'no-referrer']);
      expect(DOCUMENT_ONLY.filter((name) => name in res.headers), url).toEqual([]);
    }
  });

  it('an HTML document (a page, the API reference, an HTML 404) carries helmet’s whole set with its script and style policy', async () => {
    for (const url of ['/login', '/api/docs', '/no/such/page']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.headers['content-type'], url).toContain('text/html');
      expect(String(res.headers['content-security-policy']), url).toMatch(/script-src 'self';style-src 'self'.*frame-ancestors 'none'/);
      expect(DOCUMENT_ONLY.filter((name) => !(name in res.headers)), url).toEqual([]);
    }
  });
});

describe('while the database is unreachable (issue #7 §4)', () => {
  let t: TestApp;
  let working: TestApp['services']['db'];
  let ping: TestApp['services']['database']['ping'];
  let unreachable: Kysely<Database>;
  beforeAll(async () => {
    t = await createTestApp();
    working = t.services.db;
    ping = t.services.database.ping;
    // A PostgreSQL nobody listens on: every query fails with ECONNREFUSED, as when it is stopped.
    const pool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/none`, connectionTimeoutMillis: 1000 });
    pool.on('error', () => undefined);
    unreachable = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  });
  afterAll(async () => {
    await unreachable.destroy();
    await t.close();
  });

  /** Runs `check` with every query of the app going to the unreachable database. */
  async function whileDown(check: () => Promise<void>): Promise<void> {
    Object.assign(t.services, { db: unreachable });
    try {
      await check();
    } finally {
      Object.assign(t.services, { db: working });
    }
  }

  it('an API request answers 503 {code: 0, message} with Retry-After, not a 500', async () => {
    await whileDown(async () => {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/webhooks/123456789/some-token' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ code: 0, message: 'Service temporarily unavailable' });
      expect(res.headers['retry-after']).toBe('5');
    });
    const after = await t.app.inject({ method: 'GET', url: '/api/v1/webhooks/123456789/some-token' });
    expect(after.statusCode).toBe(404);
  });

  it('a page answers an HTML 503 page without internals', async () => {
    await whileDown(async () => {
      const res = await t.app.inject({ method: 'GET', url: '/', cookies: { gh_session: 'x'.repeat(43) } });
      expect(res.statusCode).toBe(503);
      expect(res.headers['content-type']).toContain('text/html');
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body).toContain('Temporarily unavailable');
      expect(res.body).not.toContain('ECONNREFUSED');
    });
  });

  it('the token endpoint answers 503 temporarily_unavailable in RFC 6749 form, no-store', async () => {
    await whileDown(async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/oauth2/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=refresh_token&refresh_token=abc&client_id=123&client_secret=def',
      });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: 'temporarily_unavailable' });
      expect(res.headers['retry-after']).toBe('5');
      expect(res.headers['cache-control']).toBe('no-store');
    });
  });

  it('/readyz answers 503 database unreachable, and 200 again once it answers', async () => {
    Object.assign(t.services.database, { ping: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })) });
    try {
      const res = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ status: 'unavailable', database: 'unreachable' });
    } finally {
      Object.assign(t.services.database, { ping });
    }
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});

describe('/readyz with Redis configured', () => {
  let t: TestApp;
  let redisUp = true;
  beforeAll(async () => {
    t = await createTestApp({ redisReachable: async () => redisUp });
  });
  afterAll(async () => t.close());

  it('reports Redis, and stays ready while Redis is unreachable (rate limits fall back to memory)', async () => {
    redisUp = true;
    const up = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(up.statusCode).toBe(200);
    expect(up.json()).toEqual({ status: 'ready', database: 'ok', redis: 'ok' });
    redisUp = false;
    const down = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(down.statusCode).toBe(200);
    expect(down.json()).toMatchObject({ status: 'ready', database: 'ok', redis: 'unreachable' });
    expect(down.json().degraded).toMatch(/rate limits on this instance/);
  });
});

describe('Prometheus metrics at /metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  const scrape = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    return res;
  };

  it('answers the Prometheus text format with process metrics', async () => {
    const res = await scrape();
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.body).toContain('# TYPE http_requests_total counter');
    expect(res.body).toContain('# TYPE http_request_duration_seconds histogram');
    expect(sample(res.body, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(res.body, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('counts requests and their latency by method, route and status', async () => {
    for (let i = 0; i < 3; i += 1) await t.app.inject({ method: 'GET', url: '/healthz' });
    const { body } = await scrape();
    expect(sample(body, 'http_requests_total', { method: 'GET', route: '/healthz', status_code: '200' })).toBe(3);
    expect(sample(body, 'http_request_duration_seconds_count', { method: 'GET', route: '/healthz' })).toBe(3);
    expect(sample(body, 'http_request_duration_seconds_bucket', { method: 'GET', route: '/healthz', le: '+Inf' })).toBe(3);
  });

  it('labels a request that matched no route "(unmatched)", never with its URL, so webhook tokens stay out', async () => {
    const secret = 'wht_notInTheMetrics0123456789';
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/nowhere/123/${secret}` });
    expect(res.statusCode).toBe(404);
    const { body } = await scrape();
    expect(sample(body, 'http_requests_total', { method: 'POST', route: '(unmatched)', status_code: '404' })).toBe(1);
    expect(body).not.toContain(secret);
    expect(body).not.toContain('/api/v1/nowhere');
  });

  it('times database statements by operation', async () => {
    const before = sample((await scrape()).body, 'db_query_duration_seconds_count', { operation: 'raw', outcome: 'ok' }) ?? 0;
    await t.app.inject({ method: 'GET', url: '/readyz' });
    await t.app.inject({ method: 'GET', url: '/readyz' });
    const after = sample((await scrape()).body, 'db_query_duration_seconds_count', { operation: 'raw', outcome: 'ok' });
    expect(after).toBe(before + 2);
  });

  it('times the hot path\'s prepared statements: a webhook execute\'s insert, and on SQLite its group\'s COMMIT', async () => {
    const w = await createTestWebhook(t);
    const count = async (operation: string) => sample((await scrape()).body, 'db_query_duration_seconds_count', { operation, outcome: 'ok' }) ?? 0;
    const [inserts, commits] = [await count('insert'), await count('commit')];
    expect((await call(t, 'POST', w.path, { content: 'timed' })).statusCode).toBe(204);
    expect(await count('insert')).toBe(inserts + 1);
    // PostgreSQL commits each statement itself; only SQLite's write groups have a COMMIT of their own.
    expect(await count('commit')).toBe(testDialect === 'sqlite' ? commits + 1 : commits);
  });

  it('times rate-limit store operations and counts allowed and limited attempts', async () => {
    const rule = { limit: 1, windowMs: 1000 };
    const now = t.clock.now();
    expect((await t.services.buckets.take('metrics-test', rule, now)).allowed).toBe(true);
    expect((await t.services.buckets.take('metrics-test', rule, now)).allowed).toBe(false);
    await t.services.buckets.peek('metrics-test', rule, now);
    const { body } = await scrape();
    expect(sample(body, 'rate_limit_store_duration_seconds_count', { operation: 'take' })).toBeGreaterThanOrEqual(2);
    expect(sample(body, 'rate_limit_store_duration_seconds_count', { operation: 'peek' })).toBeGreaterThanOrEqual(1);
    expect(sample(body, 'rate_limit_decisions_total', { outcome: 'allowed' })).toBeGreaterThanOrEqual(1);
    expect(sample(body, 'rate_limit_decisions_total', { outcome: 'limited' })).toBeGreaterThanOrEqual(1);
  });

  it('counts a route\'s answers under their own method and status however they alternate, and starts over after a reset', async () => {
    const metrics = createMetrics();
    const observe = metrics.requestObserver('/api/v1/things/:id');
    const count = async (method: string, status: string) => sample(await metrics.render(), 'http_requests_total', { method, route: '/api/v1/things/:id', status_code: status });
    observe('POST', 204, 1);
    observe('POST', 400, 2);
    observe('GET', 204, 3);
    observe('POST', 204, 4);
    expect(await count('POST', '204')).toBe(2);
    expect(await count('POST', '400')).toBe(1);
    expect(await count('GET', '204')).toBe(1);
    metrics.registry.resetMetrics();
    observe('POST', 204, 5);
    expect(await count('POST', '204')).toBe(1);
    expect(await count('POST', '400')).toBeUndefined();
  });

  it('keeps one registry per app: another app in the same process starts from zero', async () => {
    const other = await createTestApp();
    try {
      await other.app.inject({ method: 'GET', url: '/healthz' });
      const { body } = await other.app.inject({ method: 'GET', url: '/metrics' });
      expect(sample(body, 'http_requests_total', { method: 'GET', route: '/healthz', status_code: '200' })).toBe(1);
    } finally {
      await other.close();
    }
  });

  it('is not part of the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(doc.paths)).not.toContain('/metrics');
    expect(Object.keys(doc.paths)).not.toContain('/healthz');
  });
});

describe('request metrics use the route pattern', () => {
  it('a parameterised route is counted under its pattern, not the URL with the token in it', async () => {
    const app: App = Fastify().withTypeProvider<TypeBoxTypeProvider>();
    const metrics = createMetrics();
    installRequestMetrics(app, metrics);
    app.post('/api/v1/webhooks/:id/:token', async (_request, reply) => reply.code(204).send());
    await app.ready();
    const secret = 'wht_secretWebhookToken42';
    expect((await app.inject({ method: 'POST', url: `/api/v1/webhooks/42/${secret}` })).statusCode).toBe(204);
    const body = await metrics.render();
    expect(sample(body, 'http_requests_total', { method: 'POST', route: '/api/v1/webhooks/:id/:token', status_code: '204' })).toBe(1);
    expect(body).not.toContain(secret);
    await app.close();
  });

  it('counts each answer once: a GET route asked with HEAD, and a route with onResponse hooks of its own, which still run', async () => {
    const app: App = Fastify().withTypeProvider<TypeBoxTypeProvider>();
    const metrics = createMetrics();
    installRequestMetrics(app, metrics);
    let ownHookRuns = 0;
    app.get('/things/:id', async () => ({ ok: true }));
    app.get('/hooked', { onResponse: [(_request, _reply, done) => ((ownHookRuns += 1), done())] }, async () => ({ ok: true }));
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/things/1' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'HEAD', url: '/things/2' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/hooked' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'HEAD', url: '/hooked' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/nothing-here' })).statusCode).toBe(404);
    const body = await metrics.render();
    expect(sample(body, 'http_requests_total', { method: 'GET', route: '/things/:id', status_code: '200' })).toBe(1);
    expect(sample(body, 'http_requests_total', { method: 'HEAD', route: '/things/:id', status_code: '200' })).toBe(1);
    expect(sample(body, 'http_request_duration_seconds_count', { method: 'GET', route: '/things/:id' })).toBe(1);
    expect(sample(body, 'http_requests_total', { method: 'GET', route: '/hooked', status_code: '200' })).toBe(1);
    expect(sample(body, 'http_requests_total', { method: 'HEAD', route: '/hooked', status_code: '200' })).toBe(1);
    expect(sample(body, 'http_requests_total', { method: 'GET', route: '(unmatched)', status_code: '404' })).toBe(1);
    expect(ownHookRuns).toBe(2);
    await app.close();
  });
});
