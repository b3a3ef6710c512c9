#!/usr/bin/env node
// `npm run soak` (issue #7 §7): mixed traffic against the built server — OAuth flows (consent,
// code exchange, identity), refreshes, webhook executes and message edits, page views — with
// RSS, event-loop delay, latency and error counts sampled every few seconds. Prints one row per
// sample and a summary, and exits 1 on any 5xx, any network error, a server exit, or an RSS
// growth trend beyond the limit (docs/reliability.md "Soak" explains the rule).
//
//   --duration <t>      how long: 10m (default), 30s, 90 (seconds)
//   --concurrency <n>   clients sending in parallel (default 8)
//   --database-url <u>  use this database (default: a fresh SQLite file in a temporary directory)
//   --redis-url <u>     give the server REDIS_URL
//   --rss-limit-mb <n>  the allowed RSS growth over the measured window (default 64)
//   --json <file>       also write every sample and the summary as JSON
//
// Needs `npm run build` first (dist/src/main.js); builds nothing itself.
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'dist/src/main.js');
const CLI = join(ROOT, 'dist/src/cli/index.js');
const REDIRECT = 'https://soak.example/cb';
const PASSWORD = 'soak test passphrase 1';
/** SPEC §8 allows 10 executes per 2 s per webhook; the channel limit is 10 webhooks. */
const CHANNELS = 2;
const WEBHOOKS_PER_CHANNEL = 10;

// ---- options ----------------------------------------------------------------------------------

function parseDuration(text) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(String(text).trim());
  if (!m) throw new Error(`--duration: "${text}" is not a duration like 30s, 10m or 90`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's'];
}

function parseArgs(argv) {
  const options = { durationMs: 10 * 60_000, concurrency: 8, databaseUrl: undefined, redisUrl: undefined, rssLimitMb: 64, json: undefined };
  for (let i = 0; i < argv.length; i += 1) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--duration') options.durationMs = parseDuration(value());
    else if (flag === '--concurrency') options.concurrency = Math.max(1, Number(value()));
    else if (flag === '--database-url') options.databaseUrl = value();
    else if (flag === '--redis-url') options.redisUrl = value();
    else if (flag === '--rss-limit-mb') options.rssLimitMb = Number(value());
    else if (flag === '--json') options.json = value();
    else if (flag === '--help' || flag === '-h') {
      process.stdout.write(readHeader());
      process.exit(0);
    } else throw new Error(`unknown option ${flag} (see --help)`);
  }
  return options;
}

function readHeader() {
  return `${spawnSync('sed', ['-n', '2,14p', fileURLToPath(import.meta.url)], { encoding: 'utf8' }).stdout.replace(/^\/\/ ?/gm, '')}`;
}

// ---- the server process ---------------------------------------------------------------------

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function startServer(databaseUrl, redisUrl) {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    PORT: String(port),
    HOST: '127.0.0.1',
    GATEHOUSE_BASE_URL: baseUrl,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    // Every client authorizes its app far more often than a person would (see bench/lib/processes.mjs).
    GATEHOUSE_AUTHORIZE_CODES_PER_10_MIN: '0',
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
  };
  const child = spawn(process.execPath, [MAIN], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logged = { errors: [], warnings: 0 };
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const onLine = (line) => {
    let level = 0;
    try {
      level = JSON.parse(line).level ?? 0;
    } catch {
      level = 50; // not JSON: something printed outside the logger
    }
    if (level >= 50) logged.errors.push(line.slice(0, 300));
    else if (level >= 40) logged.warnings += 1;
  };
  createInterface({ input: child.stdout }).on('line', onLine);
  createInterface({ input: child.stderr }).on('line', onLine);
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode} at start-up:\n${logged.errors.join('\n')}`);
    try {
      if ((await fetch(`${baseUrl}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > 30_000) throw new Error('the server was not ready within 30 s');
    await sleep(50);
  }
  return { baseUrl, child, exited, logged };
}

function cli(databaseUrl, lines) {
  const result = spawnSync(process.execPath, [CLI, 'batch', '--json', '--stop-on-error'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    input: `${lines.join('\n')}\n`,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`seeding failed: ${result.stdout}\n${result.stderr}`);
  // One record per line, then a {"batch": …} summary.
  return result.stdout.trim().split('\n').map((l) => JSON.parse(l)).slice(0, lines.length);
}

// ---- a browser-like client --------------------------------------------------------------------

class Agent {
  cookies = new Map();
  constructor(baseUrl, stats) {
    this.baseUrl = baseUrl;
    this.stats = stats;
  }
  headers(extra = {}) {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    return { ...(cookie ? { cookie } : {}), ...extra };
  }
  async request(kind, path, init = {}) {
    const started = performance.now();
    let response;
    try {
      response = await fetch(new URL(path, this.baseUrl), { redirect: 'manual', ...init, headers: this.headers(init.headers) });
    } catch (error) {
      this.stats.record(kind, 0, performance.now() - started, error);
      throw error;
    }
    const body = await response.text();
    this.stats.record(kind, response.status, performance.now() - started);
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: response.status, body, location: response.headers.get('location'), headers: response.headers };
  }
  get(kind, path) {
    return this.request(kind, path);
  }
  postForm(kind, path, fields) {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const item of Array.isArray(v) ? v : [v]) body.append(k, item);
    return this.request(kind, path, { method: 'POST', body: body.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.baseUrl } });
  }
  async submit(kind, pagePath, action, fields) {
    const page = await this.get(kind, pagePath);
    const token = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
    if (!token) throw new Error(`no CSRF token on ${pagePath} (${page.status})`);
    return this.postForm(kind, action, { ...fields, _csrf: token });
  }
}

function decodeEntities(text) {
  return text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`' })[e] ?? '');
}

// ---- statistics -------------------------------------------------------------------------------

class Stats {
  total = { requests: 0, byClass: { '2xx': 0, '3xx': 0, '4xx': 0, '429': 0, '5xx': 0, network: 0 }, byKind: {} };
  window = { requests: 0, fivexx: 0, network: 0, other4xx: 0, limited: 0, durations: [] };
  fivexxSamples = [];
  unexpected = [];
  record(kind, status, ms, error) {
    this.total.requests += 1;
    this.window.requests += 1;
    this.window.durations.push(ms);
    const k = (this.total.byKind[kind] ??= { requests: 0, errors: 0 });
    k.requests += 1;
    let cls;
    if (error) cls = 'network';
    else if (status === 429) cls = '429';
    else cls = `${Math.floor(status / 100)}xx`;
    this.total.byClass[cls] = (this.total.byClass[cls] ?? 0) + 1;
    if (cls === '5xx') {
      this.window.fivexx += 1;
      k.errors += 1;
      if (this.fivexxSamples.length < 10) this.fivexxSamples.push(`${kind} ${status}`);
    } else if (cls === 'network') {
      this.window.network += 1;
      k.errors += 1;
      if (this.fivexxSamples.length < 10) this.fivexxSamples.push(`${kind} ${error?.cause?.code ?? error?.message}`);
    } else if (cls === '429') this.window.limited += 1;
    else if (cls === '4xx') this.window.other4xx += 1;
  }
  /** An answer the traffic did not expect (a 4xx where 2xx was due): counted, shown, not fatal. */
  unexpectedAnswer(what) {
    if (this.unexpected.length < 10) this.unexpected.push(what);
  }
  takeWindow() {
    const w = this.window;
    this.window = { requests: 0, fivexx: 0, network: 0, other4xx: 0, limited: 0, durations: [] };
    return w;
  }
}

function percentile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Reads gauges from the Prometheus text: process RSS and prom-client's event-loop delay (reset at every scrape). */
async function scrapeMetrics(baseUrl) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const gauge = (name) => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
    return m ? Number(m[1]) : NaN;
  };
  return {
    rss: gauge('process_resident_memory_bytes'),
    heap: gauge('nodejs_heap_size_used_bytes'),
    lagP99: gauge('nodejs_eventloop_lag_p99_seconds'),
    lagMax: gauge('nodejs_eventloop_lag_max_seconds'),
  };
}

/** Least-squares slope of y over x. */
function slope(points) {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);

// ---- traffic ----------------------------------------------------------------------------------

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (!existsSync(MAIN) || !existsSync(CLI)) throw new Error(`${MAIN} is missing: run "npm run build" first`);
  let tempDir;
  let databaseUrl = options.databaseUrl;
  if (!databaseUrl) {
    tempDir = mkdtempSync(join(tmpdir(), 'gatehouse-soak-'));
    databaseUrl = join(tempDir, 'soak.db');
  }
  const run = `s${randomBytes(3).toString('hex')}`;

  // Seed: a person, a confidential app, a server with channels; then webhooks on the Integrations page.
  const [, app, guild] = cli(databaseUrl, [
    `people create --username ${run} --password "${PASSWORD}"`,
    `apps create --owner ${run} --name "Soak ${run}" --redirect-uri ${REDIRECT}`,
    `servers create --owner ${run} --name "Soak ${run}"`,
  ]);
  // One person per client (sign-in is throttled per account and address), each a member of the server.
  const extra = cli(databaseUrl, [
    ...Array.from({ length: CHANNELS - 1 }, (_, i) => `channels create --server ${guild.id} --name soak-${i + 1}`),
    ...Array.from({ length: options.concurrency }, (_, i) => [`people create --username ${run}c${i} --password "${PASSWORD}"`, `members add --server ${guild.id} --username ${run}c${i}`]).flat(),
  ]).slice(0, CHANNELS - 1);
  const channelIds = [guild.channels[0].id, ...extra.map((c) => c.id)];

  const server = await startServer(databaseUrl, options.redisUrl);
  const stats = new Stats();
  const basic = `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`;

  const owner = new Agent(server.baseUrl, stats);
  const signedIn = await owner.submit('sign-in', '/login', '/login', { username: run, password: PASSWORD, next: '/' });
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}`);
  const webhooks = [];
  for (const channelId of channelIds) {
    for (let i = 0; i < WEBHOOKS_PER_CHANNEL; i += 1) {
      const page = `/servers/${guild.id}/settings/integrations`;
      // POST → 303 → GET (issue #24): the URL is shown once, on the page the redirect leads to.
      const posted = await owner.submit('webhook-create', page, `${page}/webhooks`, { name: `Soak ${i}`, channelId });
      const created = posted.status === 303 && posted.location ? await owner.get('webhook-create', posted.location) : posted;
      const path = /\/api\/v1\/webhooks\/\d+\/[A-Za-z0-9_-]+/.exec(created.body)?.[0];
      if (created.status !== 200 || !path) throw new Error(`webhook creation answered ${posted.status} then ${created.status}: ${/class="error"[^>]*>([^<]*)/.exec(created.body)?.[1] ?? created.body.slice(0, 200)}`);
      webhooks.push({ path, messages: [], nextAt: 0, sent: [] });
    }
  }

  // Each client signs in once (its own session), then loops over weighted actions.
  const refreshTokens = [];
  const accessTokens = [];
  async function oauthFlow(agent) {
    const { verifier, challenge } = pkce();
    const query = new URLSearchParams({ response_type: 'code', client_id: app.client_id, redirect_uri: REDIRECT, scope: 'identify email', state: randomBytes(6).toString('hex'), code_challenge: challenge, code_challenge_method: 'S256' });
    const page = await agent.get('oauth-authorize', `/app/oauth2/authorize?${query}`);
    let location = page.location;
    if (page.status === 200) {
      const form = /<form method="post" action="\/app\/oauth2\/authorize">([\s\S]*?)<\/form>/.exec(page.body)?.[1] ?? '';
      const fields = {};
      for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]] = decodeEntities(m[2]);
      const answer = await agent.postForm('oauth-consent', '/app/oauth2/authorize', { ...fields, decision: 'authorize' });
      location = answer.location;
    }
    const code = location ? new URL(location).searchParams.get('code') : null;
    if (!code) return stats.unexpectedAnswer(`authorize gave no code (${page.status})`);
    const token = await agent.request('oauth-token', '/api/oauth2/token', {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }).toString(),
    });
    if (token.status !== 200) return stats.unexpectedAnswer(`code exchange ${token.status}`);
    const issued = JSON.parse(token.body);
    refreshTokens.push(issued.refresh_token);
    accessTokens.push(issued.access_token);
    if (refreshTokens.length > 200) refreshTokens.shift();
    if (accessTokens.length > 200) accessTokens.shift();
    const me = await agent.request('identity', '/api/v1/users/@me', { headers: { authorization: `Bearer ${issued.access_token}` } });
    if (me.status !== 200) stats.unexpectedAnswer(`identity ${me.status}`);
  }
  async function refresh(agent) {
    const token = refreshTokens.shift();
    if (!token) return oauthFlow(agent);
    const answer = await agent.request('oauth-refresh', '/api/oauth2/token', {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
    });
    if (answer.status !== 200) return stats.unexpectedAnswer(`refresh ${answer.status}`);
    const issued = JSON.parse(answer.body);
    refreshTokens.push(issued.refresh_token);
    accessTokens.push(issued.access_token);
    if (accessTokens.length > 200) accessTokens.shift();
  }
  /** A webhook whose 2-second window still has room (SPEC §8), or undefined when all are spent. */
  function readyWebhook() {
    const now = Date.now();
    for (let i = 0; i < webhooks.length; i += 1) {
      const w = webhooks[(Math.random() * webhooks.length) | 0];
      w.sent = w.sent.filter((t) => now - t < 2100);
      if (w.sent.length < 9) {
        w.sent.push(now);
        return w;
      }
    }
    return undefined;
  }
  let counter = 0;
  async function execute(agent) {
    const w = readyWebhook();
    if (!w) return pageView(agent);
    counter += 1;
    const body = counter % 3 === 0 ? { content: `soak **${counter}**`, embeds: [{ title: `Build ${counter}`, description: 'passed', color: 0x22c55e, fields: [{ name: 'branch', value: 'main', inline: true }] }] } : { content: `soak message ${counter}`, username: `Soak ${counter % 7}` };
    const answer = await agent.request('webhook-execute', `${w.path}?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (answer.status === 200) {
      w.messages.push(JSON.parse(answer.body).id);
      if (w.messages.length > 50) w.messages.shift();
    } else if (answer.status !== 429) stats.unexpectedAnswer(`execute ${answer.status}`);
  }
  async function edit(agent) {
    const w = readyWebhook();
    const id = w?.messages[(Math.random() * w.messages.length) | 0];
    if (!w || !id) return execute(agent);
    const answer = await agent.request('webhook-edit', `${w.path}/messages/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: `edited ${counter}` }) });
    if (answer.status !== 200 && answer.status !== 429) stats.unexpectedAnswer(`edit ${answer.status}`);
  }
  async function pageView(agent) {
    const pages = ['/', `/servers/${guild.id}`, `/channels/${channelIds[(Math.random() * channelIds.length) | 0]}`, '/developers/applications', '/settings/authorized-apps'];
    const path = pages[(Math.random() * pages.length) | 0];
    const answer = await agent.get('page-view', path);
    // A server's page sends its members on to its first channel.
    if (answer.status !== 200 && !(answer.status === 303 && path.startsWith('/servers/'))) stats.unexpectedAnswer(`GET ${path} ${answer.status}`);
  }
  const ACTIONS = [
    [oauthFlow, 1],
    [refresh, 2],
    [execute, 4],
    [edit, 2],
    [pageView, 3],
  ];
  const totalWeight = ACTIONS.reduce((s, [, w]) => s + w, 0);
  function pick() {
    let r = Math.random() * totalWeight;
    for (const [action, weight] of ACTIONS) if ((r -= weight) < 0) return action;
    return pageView;
  }

  const started = Date.now();
  const deadline = started + options.durationMs;
  let serverExit;
  void server.exited.then((code) => {
    serverExit = code;
  });
  const clients = [];
  for (let c = 0; c < options.concurrency; c += 1) {
    clients.push(
      (async () => {
        const agent = new Agent(server.baseUrl, stats);
        const answer = await agent.submit('sign-in', '/login', '/login', { username: `${run}c${c}`, password: PASSWORD, next: '/' });
        if (answer.status !== 303) stats.unexpectedAnswer(`client sign-in ${answer.status}`);
        while (Date.now() < deadline && serverExit === undefined) {
          try {
            await pick()(agent);
          } catch {
            // recorded by Agent.request as a network error
            await sleep(100);
          }
        }
      })(),
    );
  }

  // Sampling.
  const intervalMs = Math.min(5000, Math.max(1000, Math.round(options.durationMs / 60)));
  const samples = [];
  const cores = cpus().length;
  const header = `${'t (s)'.padStart(6)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'429'.padStart(5)} ${'4xx'.padStart(5)} ${'5xx'.padStart(4)} ${'net'.padStart(4)} ${'RSS MB'.padStart(7)} ${'heap MB'.padStart(8)} ${'lag p99'.padStart(8)} ${'lag max'.padStart(8)} ${'load'.padStart(5)}`;
  process.stdout.write(`soak: ${(options.durationMs / 1000).toFixed(0)} s, ${options.concurrency} clients, ${webhooks.length} webhooks, database ${options.databaseUrl ? 'given' : 'temporary SQLite'}, ${cores} cores; sampling every ${intervalMs / 1000} s\n${header}\n`);
  let lastAt = Date.now();
  while (Date.now() < deadline && serverExit === undefined) {
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
    const now = Date.now();
    const w = stats.takeWindow();
    let m = { rss: NaN, heap: NaN, lagP99: NaN, lagMax: NaN };
    try {
      m = await scrapeMetrics(server.baseUrl);
    } catch {
      w.network += 1;
    }
    const durations = w.durations.sort((a, b) => a - b);
    const sample = {
      t: (now - started) / 1000,
      rps: w.requests / ((now - lastAt) / 1000),
      p50: percentile(durations, 0.5),
      p99: percentile(durations, 0.99),
      limited: w.limited,
      other4xx: w.other4xx,
      fivexx: w.fivexx,
      network: w.network,
      rss: m.rss,
      heap: m.heap,
      lagP99: m.lagP99 * 1000,
      lagMax: m.lagMax * 1000,
      load: loadavg()[0],
    };
    lastAt = now;
    samples.push(sample);
    process.stdout.write(
      `${sample.t.toFixed(0).padStart(6)} ${sample.rps.toFixed(0).padStart(7)} ${sample.p50.toFixed(1).padStart(7)} ${sample.p99.toFixed(1).padStart(7)} ${String(sample.limited).padStart(5)} ${String(sample.other4xx).padStart(5)} ${String(sample.fivexx).padStart(4)} ${String(sample.network).padStart(4)} ${mb(sample.rss).padStart(7)} ${mb(sample.heap).padStart(8)} ${sample.lagP99.toFixed(1).padStart(8)} ${sample.lagMax.toFixed(1).padStart(8)} ${sample.load.toFixed(2).padStart(5)}\n`,
    );
  }
  await Promise.allSettled(clients);

  // RSS trend: least squares over the samples after the first fifth (warm-up: JIT, caches, pools).
  const measured = samples.slice(Math.floor(samples.length / 5)).filter((s) => Number.isFinite(s.rss));
  const windowS = measured.length > 1 ? measured[measured.length - 1].t - measured[0].t : 0;
  const rssSlope = slope(measured.map((s) => ({ x: s.t, y: s.rss }))); // bytes per second
  const rssGrowth = rssSlope * windowS;
  const rssValues = samples.map((s) => s.rss).filter(Number.isFinite);
  const all = { ...stats.total.byClass };
  const elapsedS = (Date.now() - started) / 1000;
  const lagP99s = samples.map((s) => s.lagP99).filter(Number.isFinite);
  const summary = {
    durationS: elapsedS,
    concurrency: options.concurrency,
    requests: stats.total.requests,
    requestsPerSecond: stats.total.requests / elapsedS,
    byClass: all,
    byKind: stats.total.byKind,
    rssStartMb: Number(mb(rssValues[0] ?? NaN)),
    rssEndMb: Number(mb(rssValues[rssValues.length - 1] ?? NaN)),
    rssPeakMb: Number(mb(Math.max(...rssValues))),
    rssTrendMbPerMin: Number(((rssSlope * 60) / 1024 / 1024).toFixed(2)),
    rssGrowthOverWindowMb: Number(mb(rssGrowth)),
    rssLimitMb: options.rssLimitMb,
    lagP99MedianMs: lagP99s.length ? Number(percentile([...lagP99s].sort((a, b) => a - b), 0.5).toFixed(1)) : NaN,
    lagP99WorstMs: lagP99s.length ? Number(Math.max(...lagP99s).toFixed(1)) : NaN,
    serverErrorsLogged: server.logged.errors.length,
    serverWarningsLogged: server.logged.warnings,
    unexpectedAnswers: stats.unexpected,
    serverExit: serverExit ?? null,
  };

  const failures = [];
  if (all['5xx'] > 0) failures.push(`${all['5xx']} responses were 5xx (${stats.fivexxSamples.join(', ')})`);
  if (all.network > 0) failures.push(`${all.network} requests failed on the network (${stats.fivexxSamples.join(', ')})`);
  if (serverExit !== undefined) failures.push(`the server exited (${serverExit})`);
  if (server.logged.errors.length > 0) failures.push(`the server logged ${server.logged.errors.length} errors: ${server.logged.errors.slice(0, 3).join(' | ')}`);
  if (rssGrowth > options.rssLimitMb * 1024 * 1024) failures.push(`RSS grew by ${mb(rssGrowth)} MB over the last ${windowS.toFixed(0)} s (trend ${summary.rssTrendMbPerMin} MB/min), beyond ${options.rssLimitMb} MB`);
  if (stats.total.requests === 0) failures.push('no request was sent');

  const kinds = Object.entries(stats.total.byKind)
    .map(([kind, k]) => `${kind} ${k.requests}`)
    .join(', ');
  process.stdout.write(
    [
      '',
      'summary',
      `  duration            ${elapsedS.toFixed(0)} s, ${options.concurrency} clients`,
      `  requests            ${stats.total.requests} (${summary.requestsPerSecond.toFixed(0)}/s): ${kinds}`,
      `  answers             2xx ${all['2xx']}, 3xx ${all['3xx']}, 429 ${all['429']}, other 4xx ${all['4xx']}, 5xx ${all['5xx']}, network errors ${all.network}`,
      `  RSS                 start ${summary.rssStartMb} MB, end ${summary.rssEndMb} MB, peak ${summary.rssPeakMb} MB; trend ${summary.rssTrendMbPerMin} MB/min = ${summary.rssGrowthOverWindowMb} MB over the last ${windowS.toFixed(0)} s (limit ${options.rssLimitMb} MB)`,
      `  event-loop delay    p99 per sample: median ${summary.lagP99MedianMs} ms, worst ${summary.lagP99WorstMs} ms`,
      `  server log          ${server.logged.errors.length} errors, ${server.logged.warnings} warnings`,
      `  unexpected answers  ${stats.unexpected.length === 0 ? 'none' : stats.unexpected.join('; ')}`,
      `  machine             ${cores} cores, load ${loadavg().map((l) => l.toFixed(2)).join(' ')} (shared: other work may run beside)`,
      failures.length === 0 ? 'PASS' : `FAIL\n  ${failures.join('\n  ')}`,
      '',
    ].join('\n'),
  );
  if (options.json) writeFileSync(options.json, JSON.stringify({ summary, samples, failures }, null, 2));

  server.child.kill('SIGTERM');
  await Promise.race([server.exited, sleep(10_000)]);
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  return failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`soak: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
