// `npm run bench -- --peers` (issue #43 §1): node-oidc-provider on the workloads of Gatehouse's
// token and userinfo scenarios, measured the same way (bench/lib/raw-load.mjs, server CPU per
// answer from /proc), so the two can stand side by side. The peer and its Node (oidc-provider 9
// needs Node ≥ 22; the npm package `node` provides one) live in bench/peers/, installed on
// demand with `npm ci --prefix bench/peers`: they are not dependencies of the project.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pool, request } from './http.mjs';
import { BENCH_DIR, freePort, processHandle } from './processes.mjs';

const PEERS_DIR = join(BENCH_DIR, 'peers');
const PEER_NODE = join(PEERS_DIR, 'node_modules', '.bin', 'node');
const CLIENT = { id: 'bench', secret: 'bench-secret-0123456789abcdef0123456789', redirectUri: 'https://bench.example/cb' };
const BASIC = `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString('base64')}`;

/**
 * The peer workloads, each beside the Gatehouse scenario it mirrors (`scenario`). Scopes: without
 * openid the code exchange and refresh return no ID token; userinfo needs openid (OIDC Core §5.3).
 */
export const PEER_WORKLOADS = [
  { key: 'userinfo', scenario: 3, name: 'userinfo (GET /me), 1,000 bearer tokens' },
  { key: 'refresh', scenario: 4, name: 'refresh_token grant, no ID token (each a new refresh token)' },
  { key: 'code', scenario: 5, name: 'authorization_code + PKCE, no ID token' },
  { key: 'code-openid', scenario: 8, name: 'authorization_code + PKCE, scope openid (ID token signed, RS256: the default)' },
];

/** Installs bench/peers/ from its lock file when its Node is missing; throws when npm fails. */
export function installPeers(log) {
  if (existsSync(PEER_NODE) && existsSync(join(PEERS_DIR, 'node_modules', 'oidc-provider'))) return;
  log('installing the peers (npm ci --prefix bench/peers: oidc-provider and the Node it needs)');
  const r = spawnSync('npm', ['ci', '--prefix', PEERS_DIR, '--no-audit', '--no-fund'], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`npm ci --prefix bench/peers failed (exit ${r.status}): the peer benchmark needs the npm registry`);
}

/** Starts the peer server with bench/peers' Node; resolves once it answers. */
export async function startPeer() {
  const port = await freePort();
  const child = spawn(PEER_NODE, [join(PEERS_DIR, 'oidc-provider-server.mjs')], { cwd: PEERS_DIR, env: { ...process.env, PORT: String(port), NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const base = `http://127.0.0.1:${port}`;
  const output = [];
  child.stdout.on('data', (c) => output.push(String(c)));
  child.stderr.on('data', (c) => output.push(String(c)));
  for (let i = 0; i < 300; i += 1) {
    if (child.exitCode !== null) throw new Error(`the peer exited with ${child.exitCode}: ${output.join('')}`);
    try {
      if ((await request(base, { path: '/healthz' })).status === 200) break;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const version = spawnSync(PEER_NODE, ['--version'], { encoding: 'utf8' }).stdout.trim();
  return { ...processHandle(child, base, output), version };
}

/** `count` codes minted through the peer's own models: [{ code, verifier }]. */
async function mint(base, count, scope) {
  const out = [];
  for (let done = 0; done < count; done += 2000) {
    const res = await request(base, { method: 'POST', path: '/bench/mint', body: { count: Math.min(2000, count - done), scope } });
    if (res.status !== 200) throw new Error(`peer mint answered ${res.status}: ${res.text.slice(0, 300)}`);
    out.push(...res.json());
  }
  return out;
}

const codeForm = ({ code, verifier }) => new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CLIENT.redirectUri, code_verifier: verifier }).toString();

async function exchange(base, codes) {
  return pool(codes, 16, async (c) => {
    const res = await request(base, { method: 'POST', path: '/token', headers: { authorization: BASIC, 'content-type': 'application/x-www-form-urlencoded' }, body: codeForm(c) });
    if (res.status !== 200) throw new Error(`peer code exchange answered ${res.status}: ${res.text.slice(0, 300)}`);
    return res.json();
  });
}

/** The load job of one workload on the peer, seeded for `count` single-use requests. */
export async function peerJob(base, key, count) {
  const headers = { authorization: BASIC };
  if (key === 'userinfo') {
    const tokens = await exchange(base, await mint(base, 1000, 'openid offline_access'));
    return { shape: 'bearer', path: '/me', tokens: tokens.map((t) => t.access_token) };
  }
  if (key === 'refresh') {
    const tokens = await exchange(base, await mint(base, count, 'offline_access'));
    return { shape: 'forms', method: 'POST', path: '/token', headers, bodies: tokens.map((t) => new URLSearchParams({ grant_type: 'refresh_token', refresh_token: t.refresh_token }).toString()) };
  }
  const codes = await mint(base, count, key === 'code' ? 'offline_access' : 'openid offline_access');
  return { shape: 'forms', method: 'POST', path: '/token', headers, bodies: codes.map(codeForm) };
}
