import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MAIN, ROOT, SERVER_MAIN, assertBuilt, freePort, freshPostgresDatabase, freshSqliteFile, startServer, type ServerProcess } from '../support/server-process.js';
import { TEST_DATABASE_URL } from '../support/database.js';

/**
 * Issue #22 §3 with the built server and CLI as processes: keys created on first start, once,
 * by two instances starting together on one database; `gatehouse keys rotate` publishes new kids
 * at once and keeps the old ones; keys sealed with GATEHOUSE_OIDC_KEY_SECRET cannot be used without it.
 */
interface Jwks {
  keys: { kid: string; alg: string }[];
}

describe(`ID-token signing keys across instances (${TEST_DATABASE_URL ? 'postgres' : 'sqlite'})`, () => {
  let databaseUrl: string;
  let cleanup: () => Promise<void> | void;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    assertBuilt();
    if (TEST_DATABASE_URL) {
      const pg = await freshPostgresDatabase();
      databaseUrl = pg.url;
      cleanup = pg.drop;
    } else {
      const file = freshSqliteFile();
      databaseUrl = file.path;
      cleanup = file.remove;
    }
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await cleanup();
  });

  const cli = (env: Record<string, string>, ...args: string[]) => {
    const result = spawnSync(process.execPath, [CLI_MAIN, ...args, '--json'], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { status: result.status, json: result.status === 0 ? (JSON.parse(result.stdout) as Record<string, unknown>) : undefined, stderr: result.stderr };
  };
  const jwksOf = async (server: ServerProcess) => (await (await fetch(`${server.baseUrl}/.well-known/jwks.json`)).json()) as Jwks;
  const secret = { GATEHOUSE_OIDC_KEY_SECRET: 'a long enough test secret for the keys' };

  it('two instances starting together on one database create one key per algorithm between them, both publishing the same JWKS', async () => {
    servers.push(...(await Promise.all([startServer({ databaseUrl, env: secret }), startServer({ databaseUrl, env: secret })])));
    const [a, b] = await Promise.all(servers.map(jwksOf));
    expect(a?.keys.map((k) => k.alg).sort()).toEqual(['ES256', 'RS256']);
    expect(b?.keys.map((k) => k.kid).sort()).toEqual(a?.keys.map((k) => k.kid).sort());
  });

  it('the private parts are stored encrypted when GATEHOUSE_OIDC_KEY_SECRET is set; an instance without the secret refuses to start', async () => {
    const listed = cli(secret, 'keys', 'list');
    expect(listed.status).toBe(0);
    const keys = (listed.json as { keys: { encrypted: boolean }[] }).keys;
    expect(keys.length).toBe(2);
    expect(keys.every((k) => k.encrypted)).toBe(true);
    const port = await freePort();
    const without = spawnSync(process.execPath, [SERVER_MAIN], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', PORT: String(port), DATABASE_URL: databaseUrl, GATEHOUSE_BASE_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'warn' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(without.status).not.toBe(0);
    expect(without.stderr).toContain('GATEHOUSE_OIDC_KEY_SECRET');
  });

  it('gatehouse keys rotate: every instance publishes the new kids at once and keeps the retired ones; the old keys sign until signs_from (issue #36 §6)', async () => {
    const before = (await jwksOf(servers[0] as ServerProcess)).keys.map((k) => k.kid);
    const rotatedAt = Date.now();
    const rotated = cli(secret, 'keys', 'rotate');
    expect(rotated.status).toBe(0);
    const records = (rotated.json as { rotated: { alg: string; kid: string; signs_from: string; retired: string[] }[] }).rotated;
    expect(records.map((r) => r.alg).sort()).toEqual(['ES256', 'RS256']);
    expect(records.flatMap((r) => r.retired).sort()).toEqual([...before].sort());
    // Published at once, signing only once a JWKS cached before the rotation (max-age=300) has expired.
    for (const record of records) expect(Date.parse(record.signs_from) - rotatedAt).toBeGreaterThan(300_000);
    for (const server of servers) {
      const kids = (await jwksOf(server)).keys.map((k) => k.kid);
      expect(kids).toEqual(expect.arrayContaining([...before, ...records.map((r) => r.kid)]));
    }
    const listed = (cli(secret, 'keys', 'list').json as { keys: { kid: string; signing: boolean }[] }).keys;
    expect(listed.filter((k) => k.signing).map((k) => k.kid).sort()).toEqual([...before].sort());
  });
});
