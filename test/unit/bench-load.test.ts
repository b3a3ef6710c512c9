import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { rawLoad, requestBuffer } from '../../bench/lib/raw-load.mjs';
import { generatorCeilingNote, judge, judgeBeside, medianRounds, peersTable, summaryTable, type ScenarioRow } from '../../bench/lib/report.mjs';

let server: http.Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A node:http server that keeps every request body it reads and answers 200 with a JSON body. */
async function recordingServer(): Promise<{ base: string; bodies: string[] }> {
  const bodies: string[] = [];
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

describe('bench load generator: requests prepared before the run, one shared pool (issue #43 §1)', () => {
  it('sends each single-use request once across all connections before any is re-sent, and counts the re-sent ones', async () => {
    const { base, bodies } = await recordingServer();
    const host = new URL(base).host;
    const pool = ['code=a', 'code=b', 'code=c', 'code=d', 'code=e'].map((body) => requestBuffer({ method: 'POST', path: '/token', host, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }));
    const result = await rawLoad({ base, pool, once: true, connections: 3, duration: 1 });
    expect(result.totalRequests).toBeGreaterThan(5);
    expect(new Set(bodies)).toEqual(new Set(['code=a', 'code=b', 'code=c', 'code=d', 'code=e']));
    // Every answered request past the fifth re-sent a spent entry; the requests still in flight
    // when the run stopped (at most one per connection) were counted as sent.
    expect(result.reused).toBeGreaterThanOrEqual(result.totalRequests - 5);
    expect(result.reused).toBeLessThanOrEqual(result.totalRequests - 5 + 3);
    expect(result.statusCodes['200']).toBe(result.totalRequests);
    expect(result.non2xx).toBe(0);
  });

  it('cycles a reusable pool without counting anything as re-sent', async () => {
    const { base } = await recordingServer();
    const host = new URL(base).host;
    const result = await rawLoad({ base, pool: [requestBuffer({ path: '/a', host }), requestBuffer({ path: '/b', host })], once: false, connections: 2, duration: 1 });
    expect(result.totalRequests).toBeGreaterThan(2);
    expect(result.reused).toBe(0);
  });

  it('reads chunked answers and hands each answer\'s headers to onResponse', async () => {
    server = http.createServer((_req, res) => {
      res.writeHead(429, { 'retry-after': '1', 'transfer-encoding': 'chunked' });
      res.write('{"message":');
      res.end('"slow down"}');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const seen: { status: number; retryAfter: string | undefined }[] = [];
    const result = await rawLoad({ base, pool: [requestBuffer({ path: '/', host: new URL(base).host })], connections: 1, duration: 0.5, onResponse: (status: number, h: Record<string, string>) => seen.push({ status, retryAfter: h['retry-after'] }) });
    expect(result.totalRequests).toBeGreaterThan(0);
    expect(result.non2xx).toBe(result.totalRequests);
    expect(seen[0]).toEqual({ status: 429, retryAfter: '1' });
  });
});

/** A measured row as bench/run.mjs builds it. */
function row(scenario: number, rate: number, cpu: number, bareCpu = 20): ScenarioRow {
  const server = { rate, latency: { p99: 5 }, non2xx: 0, reused: 0, peakRssMb: 150, cpuMicrosPerRequest: cpu };
  const bare = { rate: 50_000, latency: { p99: 2 }, cpuMicrosPerRequest: bareCpu };
  return { scenario, name: `scenario ${scenario}`, round: 1, ratio: rate / 50_000, server, bare, judgement: judge({ target: {} }, server, bare, false) };
}

describe('bench report: server CPU per answer first, issue #41 targets beside another scenario', () => {
  it('introspection is judged against half of /users/@me\'s rate in the same round', () => {
    expect(judgeBeside(row(9, 14_000, 60), row(3, 30_000, 33), 0.5, false).judgement.met).toBe(false);
    const met = judgeBeside(row(9, 16_000, 60), row(3, 30_000, 33), 0.5, false);
    expect(met.judgement.met).toBe(true);
    expect(met.judgement.notes[0]).toContain("53.3 % of scenario 3's rate (target ≥ 50 %)");
  });

  it('client credentials are judged against the refresh grant\'s rate; a smoke run stays unjudged', () => {
    expect(judgeBeside(row(10, 5_900, 160), row(4, 6_000, 165), 1, false).judgement.met).toBe(false);
    expect(judgeBeside(row(10, 5_900, 160), row(4, 6_000, 165), 1, true).judgement.met).toBe(true);
  });

  it('with --rounds, a scenario judged beside another takes its median round by that share, not by its ratio to bare', () => {
    const rounds = [
      { ...row(10, 1_000, 380), round: 1, ...judgeBeside(row(10, 1_000, 380), row(4, 833, 360), 1, false) },
      { ...row(10, 2_000, 400), round: 2, ...judgeBeside(row(10, 2_000, 400), row(4, 2_222, 320), 1, false) },
      { ...row(10, 3_000, 450), round: 3, ...judgeBeside(row(10, 3_000, 450), row(4, 3_000, 350), 1, false) },
    ];
    const [picked] = medianRounds(rounds);
    expect(picked?.round).toBe(3);
    expect(picked?.judgement.met).toBe(true);
  });

  it('the summary table leads with server CPU per answer, bare\'s beside it and their quotient', () => {
    const table = summaryTable([row(3, 30_000, 33, 12)]);
    expect(table.split('\n')[0]).toMatch(/^ *# +CPU µs\/answer GH +bare +GH\/bare +Gatehouse req\/s/);
    expect(table).toContain('2.8×');
  });

  it('warns when the generator reached less than 90 % of a plain autocannon run on bare node:http', () => {
    expect(generatorCeilingNote({ bench: 80_000, autocannon: 83_000, share: 80 / 83, connections: 50, duration: 5 })).not.toContain('below 90 %');
    expect(generatorCeilingNote({ bench: 37_000, autocannon: 83_000, share: 37 / 83, connections: 50, duration: 5 })).toContain('below 90 %');
  });

  it('the peer table puts node-oidc-provider\'s CPU per answer beside Gatehouse\'s for the same workload', () => {
    const r = { ...row(4, 6_000, 165), peer: { workload: 'refresh_token grant', node: 'v22.23.3', rate: 3_500, non2xx: 0, reused: 0, cpuMicrosPerRequest: 284 } };
    const [head, , line] = peersTable([r, row(9, 16_000, 60)]);
    expect(head).toContain('node-oidc-provider / Gatehouse');
    expect(line).toContain('| **165.0** | **284.0** | 1.7× |');
  });
});
