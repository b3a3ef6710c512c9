// --durability (issue #6 "Durability"): executes webhooks at full speed, kill -9s the server at a
// random moment, restarts it on the same database and checks that every acknowledged message
// (204, or 200 with its id under wait=true) is stored. Run for the default setting and, where the
// build has it, GATEHOUSE_DURABILITY=strict.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { DIST, startServer } from './processes.mjs';
import { installBot, seedChannels, seedDirectory, seedWebhooks, signIn } from './seed.mjs';

const CONCURRENCY = 50;

/** One POST on its own keep-alive agent (the seeding agent must not keep sockets to the killed process). */
function post(agent, base, path, body) {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = http.request({ agent, host: url.hostname, port: url.port, method: 'POST', path: url.pathname + url.search, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function storedContents(database, prefix) {
  if (database.kind === 'sqlite') {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(database.file, { readonly: true });
    db.defaultSafeIntegers(true);
    const rows = db.prepare('select id, content from messages where content like ?').all(`${prefix}%`);
    db.close();
    return new Map(rows.map((r) => [r.content, String(r.id)]));
  }
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: database.url });
  await c.connect();
  const { rows } = await c.query('select id::text as id, content from messages where content like $1', [`${prefix}%`]);
  await c.end();
  return new Map(rows.map((r) => [r.content, r.id]));
}

async function crashRun({ env, database, webhooks, mode, log, processes, smoke }) {
  const serverEnv = mode === 'strict' ? { ...env, GATEHOUSE_DURABILITY: 'strict' } : env;
  const server = await startServer(serverEnv);
  processes.push(server);
  const prefix = `dur-${mode}-${randomBytes(3).toString('hex')}-`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const acked = [];
  let sent = 0;
  let stop = false;
  const killAfterMs = (smoke ? 500 : 1500) + Math.floor(Math.random() * (smoke ? 1000 : 3000));
  const t0 = Date.now();
  const loops = Array.from({ length: CONCURRENCY }, async () => {
    while (!stop) {
      const n = sent++;
      const wait = n % 2 === 0;
      const content = `${prefix}${n}`;
      const path = `${webhooks[n % webhooks.length].path}${wait ? '?wait=true' : ''}`;
      try {
        const res = await post(agent, server.base, path, JSON.stringify({ content }));
        if (res.status === 204) acked.push({ content });
        else if (res.status === 200) acked.push({ content, id: JSON.parse(res.text).id });
      } catch {
        stop = true; // the server is gone
      }
    }
  });
  await new Promise((r) => setTimeout(r, killAfterMs));
  await server.kill9();
  const elapsed = (Date.now() - t0) / 1000;
  stop = true;
  await Promise.all(loops);
  agent.destroy();
  log(`  ${mode}: killed with -9 after ${elapsed.toFixed(2)} s; ${acked.length} messages acknowledged (${Math.round(acked.length / elapsed)}/s)`);

  const restarted = await startServer(serverEnv);
  processes.push(restarted);
  const stored = await storedContents(database, prefix);
  await restarted.stop();
  const missing = acked.filter((a) => !stored.has(a.content) || (a.id !== undefined && stored.get(a.content) !== a.id));
  log(`  ${mode}: after restart ${stored.size} of them stored; ${missing.length} acknowledged messages missing`);
  return { mode, killAfterSeconds: elapsed, acknowledged: acked.length, acknowledgedPerSecond: acked.length / elapsed, storedWithPrefix: stored.size, missing: missing.length, missingSample: missing.slice(0, 5) };
}

export async function runDurability({ env, database, log, processes, smoke }) {
  log('durability: seeding 200 channels × 10 webhooks');
  const directory = await seedDirectory(env);
  const channelIds = await seedChannels(env, directory.server.id, 200);
  const server = await startServer(env);
  processes.push(server);
  const jar = await signIn(server.base);
  await installBot(server.base, jar, directory.botApp.client_id, directory.server.id);
  const webhooks = await seedWebhooks(server.base, directory.botApp.bot_token, channelIds, 10);
  await server.stop();

  const strictAvailable = readFileSync(join(DIST, 'src/config/config.js'), 'utf8').includes('GATEHOUSE_DURABILITY');
  const modes = strictAvailable ? ['default', 'strict'] : ['default'];
  if (!strictAvailable) log('  GATEHOUSE_DURABILITY is not in this build: only the default setting is checked');
  const outcome = [];
  for (const mode of modes) {
    // A fresh set of buckets: wait out the 2 s windows of the previous run's webhooks.
    await new Promise((r) => setTimeout(r, 2200));
    outcome.push(await crashRun({ env, database, webhooks, mode, log, processes, smoke }));
  }
  return outcome;
}
