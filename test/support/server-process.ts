import { spawn, type ChildProcess, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { TEST_DATABASE_URL, type TestDatabase } from './database.js';
import { freePort } from './ports.js';
import { splitCommandLine } from '../../src/cli/commands/batch.js';
export { freePort };

/**
 * The built server and CLI as separate processes, for the reliability tests (issue #7): crash,
 * races across instances, scale-out, dependency faults. Nothing here builds: CI runs
 * `npm run build` first, and locally `npm run build` after changing src/ (the tests say so when
 * dist/ is missing).
 */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SERVER_MAIN = join(ROOT, 'dist/src/main.js');
export const CLI_MAIN = join(ROOT, 'dist/src/cli/index.js');

/** Throws a clear message when dist/ has not been built. */
export function assertBuilt(): void {
  if (!existsSync(SERVER_MAIN) || !existsSync(CLI_MAIN)) {
    throw new Error(`${SERVER_MAIN} is missing: run "npm run build" before the reliability tests`);
  }
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Runs `npm run build` when dist/ is missing or older than src/, for the e2e tests run on their
 * own (`.ci/run` builds first, so there this does nothing).
 */
export function ensureBuilt(): void {
  if (existsSync(SERVER_MAIN) && existsSync(CLI_MAIN) && statSync(SERVER_MAIN).mtimeMs >= newestMtime(join(ROOT, 'src'))) return;
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
}

/** What a child process sees as DATABASE_URL for a test database (PostgreSQL: pinned to its schema). */
export function databaseUrlFor(database: TestDatabase): string {
  if (!database.schema) return database.url;
  const separator = database.url.includes('?') ? '&' : '?';
  return `${database.url}${separator}options=${encodeURIComponent(`-c search_path=${database.schema}`)}`;
}

export interface StartServerOptions {
  databaseUrl: string;
  redisUrl?: string;
  /** Extra environment (overrides the defaults below). */
  env?: Record<string, string>;
  /** 0 or omitted: a free port is picked first, so GATEHOUSE_BASE_URL can name it. */
  port?: number;
  /** How long to wait for the "listening" line (default 30 s). */
  timeoutMs?: number;
}

export interface ServerProcess {
  /** e.g. http://127.0.0.1:41234, also the server's GATEHOUSE_BASE_URL. */
  baseUrl: string;
  port: number;
  pid: number;
  /** Every stdout and stderr line so far (stdout lines are pino's JSON). */
  logs: string[];
  /** The parsed "Gatehouse listening" log line (has `workerId`, `database`, `port`). */
  listening: Record<string, unknown>;
  /** Milliseconds from spawn to the "listening" line. */
  startupMs: number;
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM, then the exit code (SIGKILL after 15 s). */
  stop(): Promise<number | null>;
  exited: Promise<number | null>;
}

function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Spawns `node dist/src/main.js` and resolves once it logs that it listens. */
export async function startServer(options: StartServerOptions): Promise<ServerProcess> {
  assertBuilt();
  for (let attempt = 1; ; attempt += 1) {
    const port = options.port || (await freePort());
    try {
      return await spawnServer(options, port);
    } catch (error) {
      // Another process may have taken the free port in between: try another one.
      if (options.port || attempt >= 5 || !(error instanceof Error) || !error.message.includes('EADDRINUSE')) throw error;
    }
  }
}

function spawnServer(options: StartServerOptions, port: number): Promise<ServerProcess> {
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? '',
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    GATEHOUSE_BASE_URL: baseUrl,
    DATABASE_URL: options.databaseUrl,
    // Every test client signs up from 127.0.0.1; the limit itself is tested in test/http/accounts.test.ts.
    GATEHOUSE_SIGN_UPS_PER_HOUR: '0',
    // Load and crash tests mint far more codes for one person than the per-person limit allows.
    GATEHOUSE_AUTHORIZE_CODES_PER_10_MIN: '0',
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
    ...options.env,
  };
  const started = performance.now();
  const child = spawn(process.execPath, [SERVER_MAIN], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  return new Promise<ServerProcess>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`the server did not log "listening" within ${options.timeoutMs ?? 30_000} ms`)), options.timeoutMs ?? 30_000);
    function fail(error: Error): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
      reject(new Error(`${error.message}\n--- server output ---\n${logs.slice(-40).join('\n')}`));
    }
    const onLine = (line: string) => {
      logs.push(line);
      if (settled) return;
      const parsed = parseLine(line);
      if (parsed && typeof parsed['msg'] === 'string' && parsed['msg'].startsWith('Gatehouse listening')) {
        settled = true;
        clearTimeout(timer);
        resolve({
          baseUrl,
          port,
          pid: child.pid ?? 0,
          logs,
          listening: parsed,
          startupMs: performance.now() - started,
          kill: (signal = 'SIGKILL') => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          },
          stop: async () => {
            if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
            child.kill('SIGTERM');
            const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
            const code = await exited;
            clearTimeout(force);
            return code;
          },
          exited,
        });
      }
    };
    createInterface({ input: child.stdout }).on('line', onLine);
    createInterface({ input: child.stderr }).on('line', onLine);
    void exited.then((code) => fail(new Error(`the server exited with ${String(code)} before listening`)));
  });
}

/** Polls `GET {baseUrl}/readyz` until it answers 200; returns the milliseconds it took. */
export async function waitReady(baseUrl: string, timeoutMs = 10_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    try {
      const response = await fetch(`${baseUrl}/readyz`);
      if (response.status === 200) return performance.now() - started;
    } catch {
      // not listening yet
    }
    if (performance.now() - started > timeoutMs) throw new Error(`${baseUrl}/readyz did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A new, empty PostgreSQL database on TEST_DATABASE_URL's server, so several server processes
 * can share it through DATABASE_URL (a schema would need search_path in every URL). Throws when
 * TEST_DATABASE_URL is unset.
 */
export async function freshPostgresDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  if (!TEST_DATABASE_URL) throw new Error('freshPostgresDatabase needs TEST_DATABASE_URL');
  const name = `gh_rel_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const cleanup = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await cleanup.connect();
      try {
        await cleanup.query(`drop database if exists ${name} with (force)`);
      } finally {
        await cleanup.end();
      }
    },
  };
}

/** A path for a new SQLite file in its own temporary directory; `remove()` deletes the directory. */
export function freshSqliteFile(): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-rel-'));
  return { path: join(dir, 'gatehouse.db'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Quotes a value for a `seedViaCli` line (spaces, quotes and backslashes survive). */
export function cliQuote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * Runs CLI commands (`people create --username a --password "long enough 1"`, one per line,
 * without `--json`) against `databaseUrl` and returns each one's JSON record, in order. Uses one
 * `gatehouse batch` process when the build has it, else one process per line. Throws with the
 * line and its error when any line fails.
 */
export function seedViaCli(databaseUrl: string, lines: string[]): Record<string, unknown>[] {
  assertBuilt();
  const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
  if (lines.length === 0) return [];
  if (existsSync(join(ROOT, 'dist/src/cli/commands/batch.js'))) {
    const result = spawnSync(process.execPath, [CLI_MAIN, 'batch', '--json', '--stop-on-error'], { cwd: ROOT, env, input: `${lines.join('\n')}\n`, encoding: 'utf8', timeout: 120_000, maxBuffer: 256 * 1024 * 1024 });
    const records = result.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const failedRecord = records.find((r) => typeof r['error'] === 'string' && typeof r['line'] === 'number');
    if (result.status !== 0 || failedRecord) {
      const lineNo = typeof failedRecord?.['line'] === 'number' ? failedRecord['line'] : 0;
      throw new Error(`seedViaCli: line ${lineNo} "${lines[lineNo - 1] ?? ''}" failed: ${JSON.stringify(failedRecord)}\n${result.stderr}`);
    }
    return records.slice(0, lines.length);
  }
  return lines.map((line) => {
    const result = spawnSync(process.execPath, [CLI_MAIN, ...splitCommandLine(line), '--json'], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) throw new Error(`seedViaCli: "${line}" failed (${String(result.status)}): ${result.stderr}`);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  });
}

/**
 * A person's browser against a running server over fetch: keeps cookies, follows no redirects
 * (the caller reads `location`), and fills in the CSRF token of the page it just loaded.
 */
export class HttpAgent {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  private remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    return { ...(cookie ? { cookie } : {}), ...extra };
  }

  async get(path: string): Promise<{ status: number; body: string; location: string | null }> {
    const response = await fetch(new URL(path, this.baseUrl), { headers: this.headers(), redirect: 'manual' });
    this.remember(response);
    return { status: response.status, body: await response.text(), location: response.headers.get('location') };
  }

  /** POSTs a form as a browser on this origin would (Origin header set; add `_csrf` yourself or use `submit`). */
  async post(path: string, fields: Record<string, string | string[]>): Promise<{ status: number; body: string; location: string | null }> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const item of Array.isArray(v) ? v : [v]) body.append(k, item);
    const response = await fetch(new URL(path, this.baseUrl), {
      method: 'POST',
      body: body.toString(),
      headers: this.headers({ 'content-type': 'application/x-www-form-urlencoded', origin: this.baseUrl }),
      redirect: 'manual',
    });
    this.remember(response);
    return { status: response.status, body: await response.text(), location: response.headers.get('location') };
  }

  /** Loads `pagePath`, takes the CSRF token of its form, and posts `fields` to `action`. */
  async submit(pagePath: string, action: string, fields: Record<string, string | string[]>): Promise<{ status: number; body: string; location: string | null }> {
    const page = await this.get(pagePath);
    const token = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
    if (!token) throw new Error(`no CSRF token on ${pagePath} (status ${page.status})`);
    return this.post(action, { ...fields, _csrf: token });
  }

  /** Signs in on /login; throws unless the server answers with a redirect. */
  async signIn(username: string, password: string): Promise<void> {
    const response = await this.submit('/login', '/login', { username, password, next: '/' });
    if (response.status !== 303) throw new Error(`sign-in as ${username} answered ${response.status}`);
  }

  /**
   * Opens the consent screen for `authorizePath` (`/app/oauth2/authorize?…`) and presses
   * Authorize with its hidden fields (plus `extra`, e.g. ticked permissions); returns the
   * redirect location (with the code, for the code flow).
   */
  async consent(authorizePath: string, extra: Record<string, string | string[]> = {}): Promise<string> {
    const page = await this.get(authorizePath);
    if (page.status === 302 && page.location) return page.location; // already granted, no prompt
    const form = /<form method="post" action="\/app\/oauth2\/authorize">([\s\S]*?)<\/form>/.exec(page.body)?.[1];
    if (page.status !== 200 || !form) throw new Error(`no consent form at ${authorizePath} (status ${page.status}): ${page.body.slice(0, 300)}`);
    // What a browser sends: every hidden field and every ticked box, a repeated name as a list.
    const fields: Record<string, string | string[]> = {};
    for (const [, attrs = ''] of form.matchAll(/<input\b([^>]*)>/g)) {
      const name = /\bname="([^"]+)"/.exec(attrs)?.[1];
      const value = decodeEntities(/\bvalue="([^"]*)"/.exec(attrs)?.[1] ?? '');
      const sent = /type="hidden"/.test(attrs) || (/type="checkbox"/.test(attrs) && /\bchecked\b/.test(attrs) && !/\bdisabled\b/.test(attrs));
      if (!name || !sent) continue;
      const before = fields[name];
      fields[name] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
    }
    const answer = await this.post('/app/oauth2/authorize', { ...fields, decision: 'authorize', ...extra });
    if (answer.status !== 303 && answer.status !== 200) throw new Error(`consent answered ${answer.status}: ${answer.body.slice(0, 300)}`);
    return answer.location ?? '';
  }
}

function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`' })[e] ?? '');
}

/** What `seedWorkspace` created through the CLI: a person, their server with channels, and an app with a bot. */
export interface Workspace {
  username: string;
  password: string;
  serverId: string;
  /** #general first, then the extra channels. */
  channelIds: string[];
  clientId: string;
  clientSecret: string;
  botToken: string;
  botUserId: string;
  /** The app's one registered redirect URI (http://127.0.0.1/callback). */
  redirectUri: string;
}

/**
 * Seeds through the CLI (one `batch` process when built): a person, a server with `channels`
 * text channels besides #general, and a confidential app with a bot. `tag` keeps names unique
 * when several workspaces share a database.
 */
export function seedWorkspace(databaseUrl: string, options: { channels?: number; tag?: string } = {}): Workspace {
  const tag = options.tag ?? randomBytes(3).toString('hex');
  const username = `owner_${tag}`;
  const password = `correct horse ${tag}`;
  const redirectUri = 'http://127.0.0.1/callback';
  const [, server, app] = seedViaCli(databaseUrl, [
    `people create --username ${username} --password ${cliQuote(password)}`,
    `servers create --owner ${username} --name ${cliQuote(`Load ${tag}`)}`,
    `apps create --owner ${username} --name ${cliQuote(`Loader ${tag}`)} --bot --redirect-uri ${redirectUri}`,
  ]) as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
  const serverId = String(server['id']);
  const extra = seedViaCli(
    databaseUrl,
    Array.from({ length: options.channels ?? 0 }, (_, i) => `channels create --server ${serverId} --name load-${i + 1}`),
  );
  const general = (server['channels'] as { id: string }[])[0]?.id as string;
  return {
    username,
    password,
    serverId,
    channelIds: [general, ...extra.map((c) => String(c['id']))],
    clientId: String(app['client_id']),
    clientSecret: String(app['client_secret']),
    botToken: String(app['bot_token']),
    botUserId: String(app['bot_user_id']),
    redirectUri,
  };
}

/** Manage webhooks + View channel + Send messages (docs/permissions.md bit positions). */
export const BOT_PERMISSIONS = String((1n << 29n) | (1n << 10n) | (1n << 11n));

/** Signs the workspace's owner in on `baseUrl` and adds its bot to the server over the consent form. */
export async function installBotOverHttp(baseUrl: string, workspace: Workspace): Promise<HttpAgent> {
  const agent = new HttpAgent(baseUrl);
  await agent.signIn(workspace.username, workspace.password);
  await agent.consent(`/app/oauth2/authorize?client_id=${workspace.clientId}&scope=bot&permissions=${BOT_PERMISSIONS}&server_id=${workspace.serverId}`);
  return agent;
}

/** A webhook as its creator got it: the token appears only in the creation answer. */
export interface CreatedWebhook {
  id: string;
  token: string;
  channelId: string;
  /** /api/v1/webhooks/{id}/{token} */
  path: string;
}

/** Creates `perChannel` webhooks in each channel with the bot's credentials (POST /api/v1/channels/{id}/webhooks). */
export async function createWebhooksOverHttp(baseUrl: string, botToken: string, channelIds: readonly string[], perChannel: number): Promise<CreatedWebhook[]> {
  const created: CreatedWebhook[] = [];
  for (const channelId of channelIds) {
    for (let i = 0; i < perChannel; i += 1) {
      const create = () =>
        fetch(`${baseUrl}/api/v1/channels/${channelId}/webhooks`, {
          method: 'POST',
          headers: { authorization: `Bot ${botToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Hook ${i + 1}` }),
        });
      let response = await create();
      // A bot's requests are rate limited (50 per second, docs/bots.md "Rate limits"): wait a 429 out, as Discord clients do.
      while (response.status === 429) {
        const wait = (await response.json()) as { retry_after: number };
        await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait.retry_after * 1000)));
        response = await create();
      }
      const body = (await response.json()) as Record<string, unknown>;
      if (response.status !== 201) throw new Error(`creating a webhook answered ${response.status}: ${JSON.stringify(body)}`);
      created.push({ id: String(body['id']), token: String(body['token']), channelId, path: `/api/v1/webhooks/${String(body['id'])}/${String(body['token'])}` });
    }
  }
  return created;
}

/** An authorization code for the workspace's app, through the consent screen (or the remembered consent). */
export async function codeOverHttp(agent: HttpAgent, workspace: Workspace, scope = 'identify'): Promise<string> {
  const state = randomBytes(8).toString('hex');
  const location = await agent.consent(`/app/oauth2/authorize?response_type=code&client_id=${workspace.clientId}&scope=${encodeURIComponent(scope)}&redirect_uri=${encodeURIComponent(workspace.redirectUri)}&state=${state}`);
  const code = new URL(location).searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

/** POST /api/oauth2/token with client_secret_basic; the status and the parsed JSON. */
export async function tokenRequest(baseUrl: string, workspace: Workspace, fields: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/api/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(workspace.clientId)}:${encodeURIComponent(workspace.clientSecret)}`).toString('base64')}`,
    },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * Every server this process started is killed when it exits, however a test ended (a timeout, a
 * failed assertion, an interrupted run), so no orphan keeps a port and a database busy.
 */
const running = new Set<ChildProcess>();
let cleanupInstalled = false;
function trackChild(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  const killAll = () => {
    for (const c of running) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}
