import { randomBytes, randomInt } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type DatabaseHandle } from '../../src/storage/connect.js';
import { IN_CI_POSTGRES_STEP, RAN_IN_CI_SQLITE_STEP, TEST_DATABASE_URL } from '../support/database.js';
import {
  codeOverHttp,
  createWebhooksOverHttp,
  freshPostgresDatabase,
  freshSqliteFile,
  installBotOverHttp,
  seedWorkspace,
  startServer,
  tokenRequest,
  waitReady,
  type CreatedWebhook,
  type HttpAgent,
  type ServerProcess,
  type Workspace,
} from '../support/server-process.js';

/**
 * Issue #7 §1, crash safety: webhook executes at full speed (wait=true, so every acknowledged
 * message id is known) and OAuth code exchanges and refreshes running beside them; the server is
 * killed with SIGKILL at a random moment, five times, and restarted on the same database. After
 * each restart: every acknowledged message is present with its content, the server serves again
 * (within a ceiling that only catches a hang), and nothing is half-done (no consumed code without its tokens, no
 * rotated refresh token without its successor). SQLite always; PostgreSQL with TEST_DATABASE_URL.
 *
 * CI (CI=true) and default runs: 5 rounds of 1.5–2.5 s of load. GATEHOUSE_FULL=1: 5 rounds of 5–15 s.
 */
const FULL = process.env['GATEHOUSE_FULL'] === '1';
const ROUNDS = 5;
const LOAD_MS: [number, number] = FULL ? [5_000, 15_000] : [1_500, 2_500];
/** Channels × 10 webhooks (SPEC §8: at most 10 per channel, each 10 requests per 2 s). */
const CHANNELS = FULL ? 10 : 6;
const EXECUTE_WORKERS = FULL ? 24 : 12;
const OAUTH_WORKERS = 2;
const REFRESHES_PER_GRANT = 4;
/**
 * Issue #21 §6: a restart that has not served in 30 s is hung, not slow. How fast a restart serves
 * (target: 2,000 ms from the spawn to the first 200 from /readyz) is a benchmark figure, measured
 * by `npm run bench:adversarial` (bench/adversarial.mjs, "restart"): on a busy 2-core machine this
 * test's own load shares the cores with the restart (DESIGN §6).
 */
const RESTART_HANG_CEILING_MS = 30_000;
/** Each round runs until more messages than this are acknowledged (the checks need something to check). */
const MIN_ACKNOWLEDGED_PER_ROUND = 50;

if (!TEST_DATABASE_URL) console.warn('crash.test.ts: PostgreSQL rounds skipped: set TEST_DATABASE_URL to run them.');

interface Figures {
  rounds: number;
  loadMs: number[];
  acknowledged: number;
  executesPerSecond: number;
  rateLimited: number;
  inFlightAtKill: number[];
  readyMs: number[];
  exchanges: number;
  refreshes: number;
  refreshRetriesAfterCrash: number;
  consumedCodesChecked: number;
  rotatedRefreshTokensChecked: number;
}
const figures: Record<string, Figures> = {};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The traffic of one round against one server; stops when the server is killed. */
class Load {
  killed = false;
  inFlight = 0;
  readonly acknowledged = new Map<string, { content: string; channelId: string }>();
  readonly unexpected: string[] = [];
  /** Refresh tokens whose request was cut by the kill: retried after the restart. */
  readonly cutRefreshes: string[] = [];
  rateLimited = 0;
  exchanges = 0;
  refreshes = 0;
  private next = 0;
  private seq = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly round: number,
    private readonly hooks: (CreatedWebhook & { blockedUntil: number })[],
    private readonly workspace: Workspace,
    private readonly agent: HttpAgent,
  ) {}

  private pickHook(): (CreatedWebhook & { blockedUntil: number }) | undefined {
    const now = Date.now();
    for (let i = 0; i < this.hooks.length; i += 1) {
      const hook = this.hooks[(this.next + i) % this.hooks.length] as CreatedWebhook & { blockedUntil: number };
      if (hook.blockedUntil <= now) {
        this.next = (this.next + i + 1) % this.hooks.length;
        return hook;
      }
    }
    return undefined;
  }

  /**
   * Counts a request of this load while it is outstanding: executes (often idle once every
   * webhook's bucket is spent for its 2 s window) and the OAuth requests, which never wait.
   */
  private async tracked<T>(request: () => Promise<T>): Promise<T> {
    this.inFlight += 1;
    try {
      return await request();
    } finally {
      this.inFlight -= 1;
    }
  }

  private failed(what: string, error: unknown): void {
    if (!this.killed) this.unexpected.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
  }

  async executeWorker(): Promise<void> {
    while (!this.killed) {
      const hook = this.pickHook();
      if (!hook) {
        await sleep(10);
        continue;
      }
      this.seq += 1;
      // Non-ASCII and a random part, so "intact" means byte for byte.
      const content = `round ${this.round} message ${this.seq} ✓ café ${randomBytes(6).toString('hex')}`;
      try {
        const response = await this.tracked(() => fetch(`${this.baseUrl}${hook.path}?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content }) }));
        if (response.status === 200) {
          const message = (await response.json()) as { id: string; content: string };
          if (message.content !== content) this.unexpected.push(`acknowledged content differs: ${message.content}`);
          this.acknowledged.set(message.id, { content, channelId: hook.channelId });
        } else if (response.status === 429) {
          const body = (await response.json()) as { retry_after: number };
          this.rateLimited += 1;
          hook.blockedUntil = Date.now() + body.retry_after * 1000;
        } else {
          this.unexpected.push(`execute answered ${response.status}: ${await response.text()}`);
        }
      } catch (error) {
        this.failed('execute', error);
      }
    }
  }

  async oauthWorker(): Promise<void> {
    while (!this.killed) {
      let code: string;
      try {
        code = await this.tracked(() => codeOverHttp(this.agent, this.workspace));
      } catch (error) {
        this.failed('consent', error);
        continue;
      }
      let refresh: string;
      try {
        const exchange = await this.tracked(() => tokenRequest(this.baseUrl, this.workspace, { grant_type: 'authorization_code', code, redirect_uri: this.workspace.redirectUri }));
        if (exchange.status !== 200) {
          this.unexpected.push(`exchange answered ${exchange.status}: ${JSON.stringify(exchange.body)}`);
          continue;
        }
        this.exchanges += 1;
        refresh = String(exchange.body['refresh_token']);
      } catch (error) {
        this.failed('exchange', error);
        continue;
      }
      for (let i = 0; i < REFRESHES_PER_GRANT && !this.killed; i += 1) {
        try {
          const answer = await this.tracked(() => tokenRequest(this.baseUrl, this.workspace, { grant_type: 'refresh_token', refresh_token: refresh }));
          if (answer.status !== 200) {
            this.unexpected.push(`refresh answered ${answer.status}: ${JSON.stringify(answer.body)}`);
            break;
          }
          this.refreshes += 1;
          refresh = String(answer.body['refresh_token']);
        } catch (error) {
          if (this.killed) this.cutRefreshes.push(refresh);
          else this.failed('refresh', error);
          break;
        }
      }
    }
  }
}

/** The server's log lines at level error or above (pino: 50+), for failure messages. */
function errorLines(server: ServerProcess): string[] {
  return server.logs.filter((line) => {
    try {
      return Number((JSON.parse(line) as { level?: number }).level) >= 50;
    } catch {
      return true; // not JSON: something on stderr
    }
  });
}

async function countRows(handle: DatabaseHandle, query: ReturnType<typeof sql<{ n: number | bigint | string }>>): Promise<number> {
  const result = await query.execute(handle.db);
  return Number(result.rows[0]?.n ?? 0);
}

if (IN_CI_POSTGRES_STEP) console.warn(`crash.test.ts: SQLite rounds skipped: ${RAN_IN_CI_SQLITE_STEP}.`);
const targets = [...(IN_CI_POSTGRES_STEP ? [] : [{ dialect: 'sqlite' as const }]), ...(TEST_DATABASE_URL ? [{ dialect: 'postgres' as const }] : [])];

describe.each(targets)('kill -9 under load, restarted on the same database ($dialect)', ({ dialect }) => {
  let databaseUrl: string;
  let cleanup: () => Promise<void>;
  let check: DatabaseHandle;
  let server: ServerProcess | undefined;
  let workspace: Workspace;
  let agent: HttpAgent;
  let hooks: (CreatedWebhook & { blockedUntil: number })[];

  beforeAll(async () => {
    if (dialect === 'sqlite') {
      const file = freshSqliteFile();
      databaseUrl = file.path;
      cleanup = async () => file.remove();
    } else {
      const database = await freshPostgresDatabase();
      databaseUrl = database.url;
      cleanup = () => database.drop();
    }
    workspace = seedWorkspace(databaseUrl, { channels: CHANNELS - 1 });
    server = await startServer({ databaseUrl });
    agent = await installBotOverHttp(server.baseUrl, workspace);
    hooks = (await createWebhooksOverHttp(server.baseUrl, workspace.botToken, workspace.channelIds, 10)).map((h) => ({ ...h, blockedUntil: 0 }));
    // The test's own connection, for the checks: it reads what the server wrote before dying.
    check = connectDatabase(databaseUrl);
  });

  afterAll(async () => {
    server?.kill('SIGKILL');
    if (server) await server.exited;
    await check?.close();
    await cleanup?.();
  });

  it(`${ROUNDS} rounds: every acknowledged message survives intact, serving again (no hang), nothing half-done`, async () => {
    const acknowledged = new Map<string, { content: string; channelId: string }>();
    const f: Figures = { rounds: 0, loadMs: [], acknowledged: 0, executesPerSecond: 0, rateLimited: 0, inFlightAtKill: [], readyMs: [], exchanges: 0, refreshes: 0, refreshRetriesAfterCrash: 0, consumedCodesChecked: 0, rotatedRefreshTokensChecked: 0 };
    figures[dialect] = f;
    let loadTotalMs = 0;

    for (let round = 1; round <= ROUNDS; round += 1) {
      const running = server as ServerProcess;
      const load = new Load(running.baseUrl, round, hooks, workspace, agent);
      const workers = [...Array.from({ length: EXECUTE_WORKERS }, () => load.executeWorker()), ...Array.from({ length: OAUTH_WORKERS }, () => load.oauthWorker())];

      // The kill comes at a random moment of the round, mid-traffic, and not before the round has
      // carried traffic to check: on a loaded machine that takes longer, so it is waited for
      // instead of assumed from the time (issue #21 §6; DESIGN §6, no durations in tests).
      const roundStarted = performance.now();
      await sleep(randomInt(LOAD_MS[0], LOAD_MS[1]));
      while (load.acknowledged.size <= MIN_ACKNOWLEDGED_PER_ROUND && performance.now() - roundStarted < RESTART_HANG_CEILING_MS) await sleep(50);
      const loadMs = Math.round(performance.now() - roundStarted);
      load.killed = true;
      f.inFlightAtKill.push(load.inFlight);
      running.kill('SIGKILL');
      await running.exited;
      await Promise.all(workers);
      f.loadMs.push(loadMs);
      loadTotalMs += loadMs;
      expect(load.unexpected, `round ${round}: unexpected answers before the kill; server errors:\n${errorLines(running).join('\n')}`).toEqual([]);

      // Restart on the same database and port; time from the spawn to the first 200 from /readyz.
      const spawned = performance.now();
      server = await startServer({ databaseUrl, port: running.port });
      await waitReady(server.baseUrl, RESTART_HANG_CEILING_MS);
      const readyMs = performance.now() - spawned;
      f.readyMs.push(Math.round(readyMs));

      // A refresh cut by the kill is retried at once: it either never happened (a first use) or
      // it committed and this is a retry inside the grace window (docs/oauth.md): 200 both ways.
      for (const token of load.cutRefreshes) {
        const retry = await tokenRequest(server.baseUrl, workspace, { grant_type: 'refresh_token', refresh_token: token });
        expect(retry.status, `round ${round}: retrying a refresh cut by the kill: ${JSON.stringify(retry.body)}`).toBe(200);
        f.refreshRetriesAfterCrash += 1;
      }

      for (const [id, message] of load.acknowledged) acknowledged.set(id, message);
      f.acknowledged = acknowledged.size;
      f.rateLimited += load.rateLimited;
      f.exchanges += load.exchanges;
      f.refreshes += load.refreshes;
      f.rounds = round;

      // Every acknowledged message of every round so far: present, in its channel, same content.
      const ids = [...acknowledged.keys()];
      const stored = new Map<string, { content: string; channelId: string }>();
      for (let i = 0; i < ids.length; i += 500) {
        const rows = await check.db.selectFrom('messages').select(['id', 'content', 'channel_id']).where('id', 'in', ids.slice(i, i + 500)).execute();
        for (const row of rows) stored.set(String(row.id), { content: row.content, channelId: String(row.channel_id) });
      }
      const missing = ids.filter((id) => !stored.has(id));
      const altered = ids.filter((id) => stored.has(id) && JSON.stringify(stored.get(id)) !== JSON.stringify(acknowledged.get(id)));
      expect(missing, `round ${round}: acknowledged messages missing after the restart`).toEqual([]);
      expect(altered, `round ${round}: acknowledged messages altered`).toEqual([]);

      // Nothing half-done. A consumed code has tokens of its grant, unless the grant was revoked.
      const codesWithoutTokens = await countRows(
        check,
        sql<{ n: number }>`select count(*) as n from oauth_codes c join oauth_grants g on g.id = c.grant_id
          where c.used_at is not null and g.revoked_at is null
          and not exists (select 1 from oauth_access_tokens a where a.grant_id = c.grant_id)
          and not exists (select 1 from oauth_refresh_tokens r where r.grant_id = c.grant_id)`,
      );
      expect(codesWithoutTokens, `round ${round}: consumed codes without tokens`).toBe(0);
      // A rotated refresh token has its successor row, unless the grant was revoked.
      const rotatedWithoutSuccessor = await countRows(
        check,
        sql<{ n: number }>`select count(*) as n from oauth_refresh_tokens r join oauth_grants g on g.id = r.grant_id
          where r.used_at is not null and g.revoked_at is null
          and not exists (select 1 from oauth_refresh_tokens s where s.token_hash = r.successor_hash)`,
      );
      expect(rotatedWithoutSuccessor, `round ${round}: rotated refresh tokens without a successor`).toBe(0);
      expect(readyMs, `round ${round}: from spawn to the first 200 from /readyz`).toBeLessThan(RESTART_HANG_CEILING_MS);
    }

    f.consumedCodesChecked = await countRows(check, sql<{ n: number }>`select count(*) as n from oauth_codes where used_at is not null`);
    f.rotatedRefreshTokensChecked = await countRows(check, sql<{ n: number }>`select count(*) as n from oauth_refresh_tokens where used_at is not null`);
    f.executesPerSecond = Math.round(f.acknowledged / (loadTotalMs / 1000));
    // The checks had something to check: traffic of every kind, and kills that cut requests.
    expect(f.acknowledged).toBeGreaterThan(ROUNDS * MIN_ACKNOWLEDGED_PER_ROUND);
    expect(f.consumedCodesChecked).toBeGreaterThan(0);
    expect(f.rotatedRefreshTokensChecked).toBeGreaterThan(0);
    expect(f.inFlightAtKill.some((n) => n > 0)).toBe(true);

    if (dialect === 'sqlite') {
      const integrity = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(check.db);
      expect(integrity.rows.map((r) => r.integrity_check)).toEqual(['ok']);
    }
  });
});

afterAll(() => {
  for (const [dialect, f] of Object.entries(figures)) {
    console.log(
      [
        `crash safety (${dialect}, ${FULL ? 'full' : 'short'}): ${f.rounds} kill -9 rounds of ${f.loadMs.join('/')} ms load`,
        `  acknowledged messages: ${f.acknowledged} (≈${f.executesPerSecond}/s, ${f.rateLimited} answered 429), all present and intact`,
        `  requests in flight at each kill: ${f.inFlightAtKill.join(', ')}`,
        `  spawn → first 200 from /readyz: ${f.readyMs.join(', ')} ms (max ${Math.max(...f.readyMs)} ms; hang ceiling ${RESTART_HANG_CEILING_MS} ms; the 2,000 ms target is judged by bench/adversarial.mjs)`,
        `  OAuth: ${f.exchanges} code exchanges, ${f.refreshes} refreshes, ${f.refreshRetriesAfterCrash} refreshes cut by a kill retried with 200`,
        `  half-done: 0 of ${f.consumedCodesChecked} consumed codes without tokens, 0 of ${f.rotatedRefreshTokensChecked} rotated refresh tokens without a successor`,
      ].join('\n'),
    );
  }
});
