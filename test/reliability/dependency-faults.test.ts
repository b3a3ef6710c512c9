import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { TEST_DATABASE_URL } from '../support/database.js';
import { dedicatedServicesUnavailable, startDedicatedPostgres, startDedicatedRedis, type DedicatedService } from '../support/dedicated-services.js';
import { cliQuote, HttpAgent, seedViaCli, startServer, type ServerProcess } from '../support/server-process.js';
import { SseReader } from '../support/sse.js';

/**
 * Issue #7 §4, faults in dependencies: two instances of the built server on a PostgreSQL and a
 * Redis this test owns (test/support/dedicated-services.ts: own ports and data directories; the
 * shared 5432/6379 are never stopped). PostgreSQL, then Redis, is stopped while requests flow and
 * started again; the servers are never restarted.
 *
 * - PostgreSQL down: every request answers within 5 s — 503 with Retry-After and `{code: 0,
 *   message}` under /api/, an HTML 503 page elsewhere, `temporarily_unavailable` at the token
 *   endpoint — never a 500; /readyz says 503 `database: unreachable`; /healthz stays 200; once
 *   PostgreSQL is back both instances serve again by themselves.
 * - Redis down: webhook executes keep working on each instance's memory buckets (so two instances
 *   accept up to twice the limit: the documented fallback, logged once); a live view still gets
 *   what its own instance writes; /readyz stays 200 and reports `redis: unreachable`. Once Redis
 *   is back, buckets are in Redis again (their keys reappear, one bucket for both instances) and
 *   live updates cross instances again.
 *
 * Needs the PostgreSQL server binaries and redis-server (skipped with a printed reason otherwise).
 * In CI it runs once, in the PostgreSQL + Redis step; with CI=true and no TEST_DATABASE_URL (the
 * SQLite step) it is skipped. Traffic while PostgreSQL is down: 2 s in CI, 6 s with GATEHOUSE_FULL=1
 * or outside CI.
 */

const CI = process.env['CI'] === 'true';
/** SPEC §8: a webhook's bucket refills every 2 s. */
const WEBHOOK_WINDOW_MS = 2100;
const FULL = process.env['GATEHOUSE_FULL'] === '1' || !CI;
const OUTAGE_TRAFFIC_MS = FULL ? 6000 : 2000;
const TRAFFIC_WORKERS = 4;
/** Issue #7 §4: no request waits longer than this while a dependency is down. */
const FAIL_FAST_MS = 5000;
/** How long the service may take to serve again once the dependency is back ("a few seconds"). */
const RECOVERY_MS = 5000;

const missing = dedicatedServicesUnavailable();
const skipReason = missing ?? (CI && !TEST_DATABASE_URL ? 'in CI it runs once, in the PostgreSQL + Redis step (TEST_DATABASE_URL set)' : undefined);
if (skipReason) console.warn(`test/reliability/dependency-faults.test.ts is skipped: ${skipReason}`);

interface Answer {
  status: number;
  ms: number;
  headers: Headers;
  text: string;
}

/** One request with a hard 10 s limit: a hang shows up as status 0 and a time past FAIL_FAST_MS. */
async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const started = performance.now();
  try {
    const response = await fetch(url, { redirect: 'manual', ...init, signal: AbortSignal.timeout(10_000) });
    const text = await response.text();
    return { status: response.status, ms: performance.now() - started, headers: response.headers, text };
  } catch {
    return { status: 0, ms: performance.now() - started, headers: new Headers(), text: '' };
  }
}

function json<T>(answer: Answer): T {
  return JSON.parse(answer.text) as T;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `check` every 100 ms until it returns true; resolves with the milliseconds it took. */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(100);
  }
}

function logCount(server: ServerProcess, message: string): number {
  return server.logs.filter((line) => line.includes(message)).length;
}

describe.skipIf(Boolean(skipReason))('faults in dependencies: PostgreSQL and Redis stopped and started while serving', () => {
  let postgres: DedicatedService;
  let redis: DedicatedService;
  let a: ServerProcess;
  let b: ServerProcess;
  let redisClient: Redis;
  const summary: string[] = [];

  const person = { username: 'faultada', password: 'correct horse battery staple' };
  const redirectUri = 'http://127.0.0.1:9/callback';
  let channelId = '';
  let cookie = '';
  let accessToken = '';
  let refreshToken = '';
  let basicAuth = '';
  let botAuth = '';
  /** Webhook paths (/api/v1/webhooks/:id/:token), one per step so each starts a fresh bucket window. */
  const hooks: Record<'traffic' | 'burstDown' | 'live' | 'burstBack', string> = { traffic: '', burstDown: '', live: '', burstBack: '' };

  beforeAll(async () => {
    const started = performance.now();
    [postgres, redis] = await Promise.all([startDedicatedPostgres(), startDedicatedRedis()]);
    // One after the other: the first applies the migrations.
    a = await startServer({ databaseUrl: postgres.url, redisUrl: redis.url });
    b = await startServer({ databaseUrl: postgres.url, redisUrl: redis.url });
    redisClient = new Redis(redis.url, { maxRetriesPerRequest: 1, retryStrategy: () => 200 });
    redisClient.on('error', () => undefined);

    const [server, app] = seedViaCli(postgres.url, [
      `people create --username ${person.username} --password ${cliQuote(person.password)}`,
      `servers create --owner ${person.username} --name ${cliQuote('Fault Lab')}`,
      `apps create --owner ${person.username} --name ${cliQuote('Fault Bot')} --bot --redirect-uri ${redirectUri}`,
    ]).slice(1) as [{ id: string; channels: { id: string; name: string }[] }, { client_id: string; client_secret: string; bot_token: string }];
    channelId = (server.channels.find((c) => c.name === 'general') ?? server.channels[0])!.id;
    basicAuth = `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`;
    botAuth = `Bot ${app.bot_token}`;

    // The person: a session, the bot installed in their server, an OAuth access and refresh token.
    const agent = new HttpAgent(a.baseUrl);
    await agent.signIn(person.username, person.password);
    cookie = [...agent.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const permissions = Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.MANAGE_WEBHOOKS;
    await agent.consent(`/app/oauth2/authorize?${new URLSearchParams({ client_id: app.client_id, scope: 'bot', permissions: permissions.toString(), server_id: server.id }).toString()}`);
    const location = await agent.consent(`/app/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.client_id, redirect_uri: redirectUri, scope: 'identify', state: 'faults' }).toString()}`);
    const code = new URL(location).searchParams.get('code') ?? '';
    const exchanged = await send(`${a.baseUrl}/api/oauth2/token`, {
      method: 'POST',
      headers: { authorization: basicAuth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri }).toString(),
    });
    expect(exchanged.status).toBe(200);
    ({ access_token: accessToken, refresh_token: refreshToken } = json<{ access_token: string; refresh_token: string }>(exchanged));

    // The bot makes the webhooks (its token is the third kind of credential the test uses).
    for (const name of Object.keys(hooks) as (keyof typeof hooks)[]) {
      const created = await send(`${a.baseUrl}/api/v1/channels/${channelId}/webhooks`, { method: 'POST', headers: { authorization: botAuth, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
      expect(created.status).toBe(201);
      const webhook = json<{ id: string; token: string }>(created);
      hooks[name] = `/api/v1/webhooks/${webhook.id}/${webhook.token}`;
    }
    summary.push(`setup (dedicated PostgreSQL :${postgres.port} and Redis :${redis.port}, 2 instances, seed): ${Math.round(performance.now() - started)} ms`);
  });

  afterAll(async () => {
    redisClient?.disconnect();
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([postgres?.destroy(), redis?.destroy()]);
    if (summary.length > 0) console.log(`\nDependency faults (issue #7 §4)\n  ${summary.join('\n  ')}\n`);
  });

  /** What a person, an app, a bot and a webhook do; each answers 2xx when all is well. */
  function probes(base: string): { name: string; run: () => Promise<Answer> }[] {
    let n = 0;
    return [
      { name: 'webhook execute', run: () => send(`${base}${hooks.traffic}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: `traffic ${(n += 1)}` }) }) },
      { name: 'GET /users/@me (OAuth token)', run: () => send(`${base}/api/v1/users/@me`, { headers: { authorization: `Bearer ${accessToken}` } }) },
      { name: 'GET channel webhooks (bot)', run: () => send(`${base}/api/v1/channels/${channelId}/webhooks`, { headers: { authorization: botAuth } }) },
      { name: 'channel page (session)', run: () => send(`${base}/channels/${channelId}`, { headers: { cookie } }) },
    ];
  }

  it('PostgreSQL stopped mid-traffic: 503 within 5 s (JSON, page, OAuth), /readyz unreachable, then recovery without a restart', async () => {
    for (const server of [a, b]) for (const probe of probes(server.baseUrl)) expect((await probe.run()).status, probe.name).toBeLessThan(300);

    // Traffic from several clients at once; PostgreSQL stops while it flows.
    const answers: (Answer & { probe: string })[] = [];
    let flowing = true;
    const workers = Array.from({ length: TRAFFIC_WORKERS }, async (_, w) => {
      const list = probes(w % 2 === 0 ? a.baseUrl : b.baseUrl);
      for (let i = w; flowing; i += 1) {
        const probe = list[i % list.length]!;
        answers.push({ ...(await probe.run()), probe: probe.name });
        await sleep(25);
      }
    });
    await sleep(500);
    const stopping = performance.now();
    await postgres.stop();
    const stoppedAt = performance.now();
    await sleep(OUTAGE_TRAFFIC_MS);
    flowing = false;
    await Promise.all(workers);

    // Every answer: a success (or the webhook's own 429) from before the stop, or a 503 — fast,
    // never a 500 or a hang.
    const statuses = new Map<number, number>();
    for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    const unexpected = answers.filter((x) => ![200, 204, 503].includes(x.status) && !(x.status === 429 && x.probe === 'webhook execute'));
    expect(unexpected.map((x) => `${x.probe}: ${x.status}`)).toEqual([]);
    const slowest = Math.max(...answers.map((x) => x.ms));
    expect(slowest).toBeLessThan(FAIL_FAST_MS);
    expect(statuses.get(503) ?? 0).toBeGreaterThan(0);
    const during = answers.filter((x) => x.status === 503);

    // Each kind of client, on each instance, now that PostgreSQL is certainly down. The traffic
    // spent the webhook's bucket (on PostgreSQL an instance that knows the webhook takes from its
    // bucket before the insert, docs/performance.md §PostgreSQL and Redis round trips): a window
    // passes first, so that the execute below is answered by the database's state, not by SPEC §8.
    await sleep(WEBHOOK_WINDOW_MS);
    const outage: string[] = [];
    for (const server of [a, b]) {
      // A token the instance remembers is answered from memory while its lease holds
      // (docs/performance.md §Bearer checks from memory; nothing can revoke it while the database
      // is down), otherwise looked up: 503.
      const remembered = await send(`${server.baseUrl}/api/v1/users/@me`, { headers: { authorization: `Bearer ${accessToken}` } });
      expect([200, 503]).toContain(remembered.status);
      if (remembered.status === 200) expect(json<{ username: string }>(remembered).username).toBe(person.username);
      // One it must look up in the database: 503.
      const api = await send(`${server.baseUrl}/api/v1/users/@me`, { headers: { authorization: `Bearer ${accessToken.slice(0, -6)}${accessToken.endsWith('zzzzzz') ? 'yyyyyy' : 'zzzzzz'}` } });
      expect(api.status).toBe(503);
      expect(json(api)).toEqual({ code: 0, message: 'Service temporarily unavailable' });
      expect(api.headers.get('retry-after')).toBe('5');

      const execute = await send(`${server.baseUrl}${hooks.traffic}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'while down' }) });
      expect(execute.status).toBe(503);
      expect(json(execute)).toEqual({ code: 0, message: 'Service temporarily unavailable' });

      const page = await send(`${server.baseUrl}/channels/${channelId}`, { headers: { cookie } });
      expect(page.status).toBe(503);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(page.headers.get('retry-after')).toBe('5');
      expect(page.text).toContain('Temporarily unavailable');
      expect(page.text).not.toMatch(/ECONNREFUSED|at [\w.]+ \(|node_modules/);

      const refresh = await send(`${server.baseUrl}/api/oauth2/token`, {
        method: 'POST',
        headers: { authorization: basicAuth, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
      });
      expect(refresh.status).toBe(503);
      expect(json<{ error: string }>(refresh).error).toBe('temporarily_unavailable');
      expect(refresh.headers.get('retry-after')).toBe('5');
      expect(refresh.headers.get('cache-control')).toBe('no-store');

      const ready = await send(`${server.baseUrl}/readyz`);
      expect(ready.status).toBe(503);
      expect(json(ready)).toEqual({ status: 'unavailable', database: 'unreachable', redis: 'ok' });
      expect((await send(`${server.baseUrl}/healthz`)).status).toBe(200);
      const times = [api, execute, page, refresh, ready].map((x) => x.ms);
      for (const ms of times) expect(ms).toBeLessThan(FAIL_FAST_MS);
      outage.push(`${Math.round(Math.max(...times))} ms`);
    }

    // PostgreSQL returns: both instances serve again by themselves.
    const restarting = performance.now();
    await postgres.start();
    const startedAt = performance.now();
    const recovery = await until(
      async () => {
        const results = await Promise.all([a, b].map(async (server) => (await send(`${server.baseUrl}/readyz`)).status === 200 && (await send(`${server.baseUrl}/api/v1/users/@me`, { headers: { authorization: `Bearer ${accessToken}` } })).status === 200));
        return results.every(Boolean);
      },
      RECOVERY_MS,
      'recovery after PostgreSQL came back',
    );
    for (const server of [a, b]) for (const probe of probes(server.baseUrl)) expect((await probe.run()).status, probe.name).toBeLessThan(300);
    const refreshed = await send(`${a.baseUrl}/api/oauth2/token`, {
      method: 'POST',
      headers: { authorization: basicAuth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
    });
    expect(refreshed.status).toBe(200);
    ({ access_token: accessToken, refresh_token: refreshToken } = json<{ access_token: string; refresh_token: string }>(refreshed));

    // Still the same processes, and no outage request was treated as a bug.
    for (const server of [a, b]) {
      expect(await Promise.race([server.exited.then(() => 'exited'), sleep(10).then(() => 'running')])).toBe('running');
      expect(logCount(server, 'unhandled error')).toBe(0);
      expect(logCount(server, 'database unavailable')).toBeGreaterThan(0);
    }

    const sorted = during.map((x) => x.ms).sort((x, y) => x - y);
    summary.push(
      `PostgreSQL stopped (pg_ctl stop -m fast, ${Math.round(stoppedAt - stopping)} ms) under ${TRAFFIC_WORKERS} clients for ${OUTAGE_TRAFFIC_MS / 1000} s: ${answers.length} requests, statuses ${[...statuses].map(([s, c]) => `${s}×${c}`).join(' ')}; 503 p50 ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms, slowest answer of all ${slowest.toFixed(1)} ms (limit ${FAIL_FAST_MS} ms)`,
      `PostgreSQL down, per instance: @me with a remembered token from memory (200); @me with a token to look up, execute, page, token refresh, /readyz all 503 (slowest ${outage.join(' / ')}); /healthz 200`,
      `PostgreSQL started again (${Math.round(startedAt - restarting)} ms): both instances ready and serving ${Math.round(recovery)} ms later, no restart`,
    );
  });

  /** `count` concurrent executes of one webhook, `perInstance` on each server; their statuses. */
  async function burst(path: string, servers: ServerProcess[], perInstance: number, tag: string): Promise<{ statuses: number[][]; slowest: number; retryAfter: (string | null)[] }> {
    const results = await Promise.all(
      servers.map((server) =>
        Promise.all(Array.from({ length: perInstance }, (_, i) => send(`${server.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: `${tag} ${i}` }) }))),
      ),
    );
    const all = results.flat();
    return {
      statuses: results.map((list) => list.map((x) => x.status)),
      slowest: Math.max(...all.map((x) => x.ms)),
      retryAfter: all.filter((x) => x.status === 429).map((x) => x.headers.get('retry-after')),
    };
  }

  const count = (list: number[], status: number) => list.filter((s) => s === status).length;

  it('Redis stopped: executes keep working on per-instance memory buckets, live views fan out locally, /readyz 200; back on Redis by itself', async () => {
    // Before: buckets live in Redis. The previous test's traffic may have emptied the webhook's
    // bucket (SPEC §8: 10 per 2 s); a window passes first.
    await sleep(WEBHOOK_WINDOW_MS);
    expect((await send(`${a.baseUrl}${hooks.traffic}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"content":"before"}' })).status).toBeLessThan(300);
    expect((await redisClient.keys('gh:rl:*')).length).toBeGreaterThan(0);
    expect(json(await send(`${a.baseUrl}/readyz`))).toEqual({ status: 'ready', database: 'ok', redis: 'ok' });

    const stream = await SseReader.open(`${a.baseUrl}/channels/${channelId}/events`, { cookie });
    try {
      expect(stream.response.status).toBe(200);
      await until(async () => ((await redisClient.call('PUBSUB', 'NUMSUB', `gh:ch:${channelId}`)) as [string, number])[1] >= 1, 5000, 'the live view subscribing in Redis');

      await redis.stop();

      // Rate limits: each instance limits on its own memory — 10 per window each, so 20 in all.
      const down = await burst(hooks.burstDown, [a, b], 12, 'burst while Redis is down');
      for (const list of down.statuses) {
        expect(count(list, 204)).toBe(10);
        expect(count(list, 429)).toBe(2);
      }
      expect(down.retryAfter.every((value) => Number(value) >= 1)).toBe(true);
      expect(down.slowest).toBeLessThan(FAIL_FAST_MS);

      for (const server of [a, b]) {
        const ready = await send(`${server.baseUrl}/readyz`);
        expect(ready.status).toBe(200);
        expect(json(ready)).toMatchObject({ status: 'ready', database: 'ok', redis: 'unreachable' });
        expect(json<{ degraded: string }>(ready).degraded).toContain('rate limits on this instance');
      }

      // Live view on instance A: what A writes still arrives; what B writes does not (no fan-out).
      const local = json<{ id: string }>(await send(`${a.baseUrl}${hooks.live}?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"content":"written on A while Redis is down"}' }));
      expect((await stream.next((e) => e.event === 'message' && e.id === local.id, 5000)).data).toContain('written on A while Redis is down');
      const remote = json<{ id: string }>(await send(`${b.baseUrl}${hooks.live}?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"content":"written on B while Redis is down"}' }));
      await expect(stream.next((e) => e.event === 'message' && e.id === remote.id, 1000)).rejects.toThrow();

      // The fallback is logged once per instance and store, not once per request.
      for (const server of [a, b]) {
        expect(logCount(server, 'Redis unreachable: rate limiting falls back')).toBe(1);
        expect(logCount(server, 'unhandled error')).toBe(0);
      }
      expect(logCount(a, 'Redis unreachable: live updates reach only the viewers on this instance')).toBe(1);

      // Redis returns (empty: no persistence): buckets and fan-out go back to it by themselves.
      const restarting = performance.now();
      await redis.start();
      const bucketsBack = await until(
        async () => {
          await send(`${a.baseUrl}${hooks.traffic}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"content":"after Redis"}' });
          const readies = await Promise.all([a, b].map(async (server) => json<{ redis?: string }>(await send(`${server.baseUrl}/readyz`)).redis));
          return readies.every((r) => r === 'ok') && (await redisClient.keys('gh:rl:*').catch(() => [])).length > 0;
        },
        RECOVERY_MS * 2,
        'rate limiting back on Redis',
      );
      let attempt = 0;
      const fanOutBack = await until(
        async () => {
          // Written on B; arrives on A's stream only through Redis.
          const sent = await send(`${b.baseUrl}${hooks.live}?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: `fan-out check ${(attempt += 1)}` }) });
          if (sent.status !== 200) return false;
          const id = json<{ id: string }>(sent).id;
          return stream.next((e) => e.event === 'message' && e.id === id, 1000).then(
            () => true,
            () => false,
          );
        },
        RECOVERY_MS * 2,
        'live updates crossing instances again',
      );

      // One bucket again for both instances: 12 + 12 concurrent executes, 10 accepted in all.
      const back = await burst(hooks.burstBack, [a, b], 12, 'burst after Redis returned');
      expect(count(back.statuses.flat(), 204)).toBe(10);
      expect(count(back.statuses.flat(), 429)).toBe(14);
      // Logs reach stdout through an asynchronous buffer within 100 ms (src/http/log-destination.ts).
      for (const server of [a, b]) await expect.poll(() => logCount(server, 'rate limiting is back on Redis'), { timeout: 2_000 }).toBe(1);

      summary.push(
        `Redis stopped: 12 concurrent executes on each of 2 instances → ${down.statuses.map((l) => `${count(l, 204)} accepted + ${count(l, 429)} × 429`).join(' and ')} (memory buckets per instance), slowest ${down.slowest.toFixed(1)} ms; /readyz 200 with redis "unreachable"; live view got its own instance's message, not the other's; fallback logged once per instance`,
        `Redis started again (${Math.round(performance.now() - restarting)} ms until both checks and the burst passed): buckets back in Redis after ${Math.round(bucketsBack)} ms, cross-instance live updates after ${Math.round(fanOutBack)} ms more (${attempt} attempt${attempt === 1 ? '' : 's'}); 12 + 12 concurrent executes → ${count(back.statuses.flat(), 204)} accepted in all`,
      );
    } finally {
      stream.close();
    }
  });
});
