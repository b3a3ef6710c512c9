// The verdict of each measurement, the median of several rounds, bench/REPORT.md and the table
// printed at the end of a run (pure: no process, no file).
import { roundTripsNote } from './round-trips.mjs';

const fmt = (n, digits = 0) => (n === undefined || n === null || Number.isNaN(n) ? '–' : Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));
const pct = (r) => (r === undefined ? '–' : `${(r * 100).toFixed(1)} %`);
const lat = (l) => `${fmt(l.p50, 1)} / ${fmt(l.p97_5, 1)} / ${fmt(l.p99, 1)}`;
/**
 * Server CPU per answer (µs), the primary figure (issue #43): what the server process itself
 * spent, which the load generator sharing the cores cannot flatter. Gatehouse, bare, and their
 * quotient (how many bare answers one Gatehouse answer costs).
 */
const cpuQuotient = (r) => (r.server.cpuMicrosPerRequest && r.bare.cpuMicrosPerRequest ? r.server.cpuMicrosPerRequest / r.bare.cpuMicrosPerRequest : undefined);
const times = (q) => (q === undefined ? '–' : `${fmt(q, 1)}×`);
/** The share of the machine's CPU the hypervisor took during each measurement, Gatehouse / bare. */
const steal = (r) => `${pct(r.server.stealShare)} / ${pct(r.bare.stealShare)}`;
const verdict = (j) => (j.met === undefined ? 'not judged' : j.met ? '**met**' : '**missed**');

/**
 * The verdict of one measurement of scenario `s` (its `target`: ratio, zeroNon2xx, p99Ms).
 * `everyRound` holds the failures that no round may have (0 non-2xx, no re-sent credential, peak
 * RSS ≤ 200 MB): with --rounds they fail the scenario whichever round is its median
 * (medianRounds below).
 */
export function judge(s, server, bare, smoke) {
  if (smoke) return { met: undefined, notes: ['smoke run: not judged'], everyRound: [] };
  const notes = [];
  const everyRound = [];
  let met = true;
  if (s.target.ratio !== undefined) {
    const ratio = server.rate / bare.rate;
    if (ratio < s.target.ratio) met = false;
    notes.push(`${(ratio * 100).toFixed(1)} % of bare (target ≥ ${s.target.ratio * 100} %)`);
  }
  if (s.target.zeroNon2xx && server.non2xx !== 0) everyRound.push(`${server.non2xx} non-2xx (target 0)`);
  if (s.target.p99Ms !== undefined) {
    if (!(server.latency.p99 <= s.target.p99Ms)) met = false;
    notes.push(`p99 ${server.latency.p99} ms (target ≤ ${s.target.p99Ms} ms)`);
  }
  if (server.reused > 0) {
    // The seeded list ran out: those requests re-sent spent codes or tokens (400, or a refresh
    // retry's cheaper 200), so the rate is not the rate of fresh exchanges.
    everyRound.push(`${server.reused} requests re-sent a spent credential (seeded list too short; rerun)`);
  }
  if (server.peakRssMb > 200) everyRound.push(`peak RSS ${server.peakRssMb} MB (target ≤ 200 MB)`);
  return { met: met && everyRound.length === 0, notes: [...notes, ...everyRound], everyRound };
}

/**
 * Issue #41's targets that compare two scenarios of one round: `row` (introspection, client
 * credentials) must reach `share` of `other`'s rate (/users/@me, the refresh grant). Returns the
 * fields to set on `row`: `beside` (the figures compared) and its judgement with the verdict added.
 */
export function judgeBeside(row, other, share, smoke) {
  const rateShare = row.server.rate / other.server.rate;
  const beside = { scenario: other.scenario, share, rateShare, cpuMicrosPerRequest: other.server.cpuMicrosPerRequest };
  const note = `${(rateShare * 100).toFixed(1)} % of scenario ${other.scenario}'s rate (target ≥ ${share * 100} %), ${fmt(row.server.cpuMicrosPerRequest, 1)} µs against its ${fmt(other.server.cpuMicrosPerRequest, 1)} µs per answer`;
  if (smoke) return { beside, judgement: row.judgement };
  return { beside, judgement: { ...row.judgement, met: row.judgement.met !== false && rateShare >= share, notes: [note, ...row.judgement.notes] } };
}

/**
 * One row per scenario from the rounds of a `--rounds n` run: the median round by the figure the
 * scenario is judged on (the ratio; scenario 7 the p99), so every figure in the row comes from one
 * real measurement. With an even count the worse of the two middle rounds is taken. A failure no
 * round may have (`judgement.everyRound`) in any round fails the scenario. The row keeps each
 * round's judged figure (`rounds`) for the report.
 */
export function medianRounds(rows) {
  const byScenario = new Map();
  for (const row of rows) byScenario.set(row.scenario, [...(byScenario.get(row.scenario) ?? []), row]);
  return [...byScenario.values()].map((measured) => {
    if (measured.length === 1) return measured[0];
    // Worst first: the lowest ratio, or for scenario 7 the highest p99.
    // Scenarios judged beside another (judgeBeside) by their share of its rate.
    const judged = (r) => (r.beside ? r.beside.rateShare : r.ratio);
    const worstFirst = [...measured].sort((a, b) => (a.scenario === 7 ? b.server.latency.p99 - a.server.latency.p99 : judged(a) - judged(b)));
    const median = worstFirst[Math.floor((worstFirst.length - 1) / 2)];
    // What no round may have (non-2xx in scenario 1, re-sent credentials, peak RSS over 200 MB)
    // fails the scenario whichever round it happened in, not only in the median one.
    const elsewhere = measured.filter((r) => r !== median).flatMap((r) => (r.judgement.everyRound ?? []).map((note) => `round ${r.round}: ${note}`));
    const judgement = median.judgement.met !== undefined && elsewhere.length > 0 ? { ...median.judgement, met: false, notes: [...median.judgement.notes, ...elsewhere] } : median.judgement;
    return { ...median, judgement, rounds: measured.map((r) => ({ round: r.round, ratio: r.ratio, p99: r.server.latency.p99, cpuMicrosPerRequest: r.server.cpuMicrosPerRequest, peakRssMb: r.server.peakRssMb, stealShare: [r.server.stealShare, r.bare?.stealShare], met: r.judgement.met })) };
  });
}

/** The short table: one line per scenario, Gatehouse beside bare node:http. */
export function summaryTable(results) {
  const head = ['#', 'CPU µs/answer GH', 'bare', 'GH/bare', 'Gatehouse req/s', 'bare req/s', 'ratio', 'p50/p97.5/p99 ms (GH)', 'p50/p97.5/p99 ms (bare)', 'non-2xx', 'RSS MB (GH/bare)', 'stolen (GH/bare)', 'target'];
  const rows = results.map((r) => [
    String(r.scenario),
    fmt(r.server.cpuMicrosPerRequest, 1),
    fmt(r.bare.cpuMicrosPerRequest, 1),
    times(cpuQuotient(r)),
    fmt(r.server.rate),
    fmt(r.bare.rate),
    pct(r.ratio),
    lat(r.server.latency),
    lat(r.bare.latency),
    fmt(r.server.non2xx),
    `${fmt(r.server.peakRssMb)}/${fmt(r.bare.peakRssMb)}`,
    steal(r),
    r.judgement.met === undefined ? '–' : r.judgement.met ? 'met' : 'MISSED',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => c.padStart(widths[i])).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/**
 * The load generator's own ceiling (issue #43): bare node:http answering one fixed GET, driven by
 * the bench's generator and by a plain `autocannon` CLI run, back to back; the bench's must reach
 * 90 % of autocannon's, or its figures would measure the generator.
 */
export function generatorCeilingNote(c) {
  const warn = c.share < 0.9 ? ' — **below 90 %: the generator, not the server, may bound the figures of this run**' : '';
  return `Load generator ceiling: bare node:http answering a GET, ${fmt(c.bench)} req/s with the bench's generator against ${fmt(c.autocannon)} req/s with a plain \`autocannon -c ${c.connections} -d ${c.duration}\` run on the same server, back to back: ${pct(c.share)} (target ≥ 90 %)${warn}.`;
}

/**
 * Gatehouse beside node-oidc-provider on the same workloads (bench/lib/peers.mjs): server CPU per
 * answer of each, measured the same way in the same round, and their quotient.
 */
export function peersTable(results) {
  const rows = results.filter((r) => r.peer);
  if (rows.length === 0) return [];
  const L = ['| # | Gatehouse scenario | node-oidc-provider workload | server CPU µs per answer, Gatehouse | node-oidc-provider | node-oidc-provider / Gatehouse | Gatehouse req/s | node-oidc-provider req/s | non-2xx GH / peer |', '|---|---|---|---:|---:|---:|---:|---:|---:|'];
  for (const r of rows) {
    const q = r.server.cpuMicrosPerRequest && r.peer.cpuMicrosPerRequest ? r.peer.cpuMicrosPerRequest / r.server.cpuMicrosPerRequest : undefined;
    L.push(`| ${r.scenario} | ${r.name} | ${r.peer.workload} | **${fmt(r.server.cpuMicrosPerRequest, 1)}** | **${fmt(r.peer.cpuMicrosPerRequest, 1)}** | ${times(q)} | ${fmt(r.server.rate)} | ${fmt(r.peer.rate)} | ${fmt(r.server.non2xx)} / ${fmt(r.peer.non2xx)}${r.peer.reused ? ` (${fmt(r.peer.reused)} re-sent)` : ''} |`);
  }
  L.push('', `node-oidc-provider ran on Node ${rows[0].peer.node} (bench/peers/), Gatehouse on the Node of this run; each pair was measured in the same round, one after the other.`);
  return L;
}

export function reportMarkdown(record, file) {
  const L = [];
  L.push(`## ${record.mode === 'peers' ? 'SQLite beside node-oidc-provider' : record.database === 'sqlite' ? (record.messages1m ? 'SQLite, after 1,000,000 messages' : 'SQLite') : 'PostgreSQL + Redis, one instance'}`, '');
  if (record.mode === 'peers') L.push(...peersTable(record.results), '');
  L.push(`Written by \`npm run bench\` (bench/run.mjs) on ${record.date}; raw figures in bench/${file} (git-ignored: bench/README.md). How to read and reproduce it: [docs/performance.md](../docs/performance.md).`, '');
  L.push(`- Database: ${record.database === 'sqlite' ? (record.durability === 'strict' ? 'SQLite (WAL, GATEHOUSE_DURABILITY=strict: synchronous=FULL, group commit)' : 'SQLite (WAL, synchronous=NORMAL, group commit: the default durability)') : `PostgreSQL + Redis (ANALYZE after each scenario's seeding, as autovacuum would; autovacuum on this PostgreSQL: ${record.autovacuum ?? '?'})`}; server started as \`${record.serverCommand ?? 'node dist/src/main.js'}\` (as \`npm start\` runs it) at its defaults (LOG_LEVEL=info: one access line per request) and GATEHOUSE_AUTHORIZE_CODES_PER_10_MIN=0 (seeding mints thousands of codes for one person; no measured request reads it).`);
  L.push(`- Machine: ${record.cores} cores shared by the server, the load generator (its own process) and whatever else ran; Node ${record.node}. Load average ${record.loadAverageAtStart.join(' / ')} at the start, ${record.loadAverageAtEnd.join(' / ')} at the end (1/5/15 min).`);
  if (record.rounds > 1) L.push(`- ${record.rounds} rounds: every scenario was measured ${record.rounds} times, each round on a fresh database and server seeded alike; each row below is the scenario's median round, judged alone (notes: every round). The raw file keeps every round (\`allRounds\`).`);
  L.push('- CPU stolen by the host: the share of the machine\'s CPU time its hypervisor gave to other guests during the measurement (/proc/stat). Each side of a ratio was measured at a different moment; where much was stolen from one side, its figures say more about the host than about the server.');
  L.push(`- ${record.connections} connections; each figure beside bare node:http answering 204 (bench/bare-server.mjs) measured in the same run with the same load settings and requests (bench/lib/raw-load.mjs: keep-alive sockets, one request in flight each, every request prepared as bytes before the run; scenario 7 an evenly paced generator).${record.webhooks ? ` ${record.webhooks} webhooks (10 per channel) spread the webhook scenarios.` : ''}`);
  if (record.generatorCeiling) L.push(`- ${generatorCeilingNote(record.generatorCeiling)}`);
  if (record.note) L.push(`- **${record.note}**`);
  L.push('');
  L.push('| # | scenario | s | server CPU µs per answer, Gatehouse | bare node:http | Gatehouse / bare | Gatehouse req/s | bare req/s | ratio | Gatehouse p50 / p97.5 / p99 ms | bare p50 / p97.5 / p99 ms | non-2xx (GH) | peak RSS MB GH / bare | CPU stolen by the host GH / bare | target | verdict |');
  L.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|');
  const target = (r) => {
    const t = r.target ?? {};
    const parts = [t.ratio !== undefined ? `≥ ${t.ratio * 100} %` : '', r.beside ? `≥ ${r.beside.share * 100} % of scenario ${r.beside.scenario}'s rate` : '', t.zeroNon2xx ? '0 non-2xx' : '', t.p99Ms !== undefined ? `p99 ≤ ${t.p99Ms} ms` : ''].filter(Boolean);
    return parts.length > 0 ? parts.join(', ') : 'none set';
  };
  for (const r of record.results) {
    L.push(
      `| ${r.scenario} | ${r.name} | ${r.duration} | **${fmt(r.server.cpuMicrosPerRequest, 1)}** | ${fmt(r.bare.cpuMicrosPerRequest, 1)} | ${times(cpuQuotient(r))} | ${fmt(r.server.rate)} | ${fmt(r.bare.rate)} | ${pct(r.ratio)} | ${lat(r.server.latency)} | ${lat(r.bare.latency)} | ${fmt(r.server.non2xx)} | ${fmt(r.server.peakRssMb)} / ${fmt(r.bare.peakRssMb)} | ${steal(r)} | ${target(r)}; RSS ≤ 200 MB | ${verdict(r.judgement)} |`,
    );
  }
  L.push('');
  L.push('Notes per scenario:', '');
  for (const r of record.results) {
    const extra = [];
    if (r.server.check429) extra.push(`${fmt(r.server.check429.tooMany)} of ${fmt(r.server.check429.total)} answers were 429, ${fmt(r.server.check429.correct)} of them with every rate-limit header (Retry-After, X-RateLimit-Limit/-Remaining/-Reset/-Reset-After/-Bucket, X-RateLimit-Scope: shared); the ratio is correct 429s per second over bare node:http's answers per second`);
    if (r.server.errors || r.server.timeouts) extra.push(`${r.server.errors} connection errors, ${r.server.timeouts} timeouts`);
    if (r.server.sendLag) {
      extra.push(`requests sent evenly at the fixed rate over ${record.connections} keep-alive connections (bench/lib/paced-load.mjs), latency counted from when each request was due; the generator's own send lag p50 / p99 ${fmt(r.server.sendLag.p50, 2)} / ${fmt(r.server.sendLag.p99, 2)} ms (bare run: ${fmt(r.bare.sendLag.p50, 2)} / ${fmt(r.bare.sendLag.p99, 2)} ms) is inside those latencies`);
    }
    if (r.autocannonBursts) {
      const a = r.autocannonBursts;
      extra.push(`for comparison, not judged: autocannon's overallRate at the same rate (each connection's share of every second sent back to back at its start) measured p50 / p97.5 / p99 ${lat(a.server.latency)} ms for Gatehouse and ${lat(a.bare.latency)} ms for bare node:http`);
    }
    if (r.rounds) {
      const each = r.rounds.map((x) => `${r.scenario === 7 ? `p99 ${fmt(x.p99, 1)} ms` : pct(x.ratio)} (${fmt(x.cpuMicrosPerRequest, 1)} µs, ${fmt(x.peakRssMb)} MB, stolen ${pct(x.stealShare?.[0])} / ${pct(x.stealShare?.[1])}, ${x.met === undefined ? 'not judged' : x.met ? 'met' : 'missed'})`);
      extra.push(`median of ${r.rounds.length} rounds (this row is round ${r.round}); round by round: ${each.join(', ')}`);
    }
    if (r.roundTrips) extra.push(roundTripsNote(r.roundTrips));
    if (r.atWarn?.defaultOverWarn !== undefined) {
      const [d1, d2] = r.atWarn.defaultRuns;
      extra.push(
        `the same build on two fresh servers, warmed alike, measured default → warn → default on the same database: at LOG_LEVEL=warn ${fmt(r.atWarn.requestsPerSec)} req/s, ${fmt(r.atWarn.cpuMicrosPerRequest, 1)} µs per answer; at the default level ${fmt(d1)} and ${fmt(d2)} req/s, ${r.atWarn.defaultCpuMicros.map((x) => fmt(x, 1)).join(' and ')} µs per answer; the default level reaches ${pct(r.atWarn.defaultOverWarn)} of warn (target ≥ 90 %)`,
      );
    } else if (r.atWarn) extra.push(`the same build at LOG_LEVEL=warn, measured right after on the same database: ${fmt(r.atWarn.requestsPerSec)} req/s (${pct(r.atWarn.ratio)} of bare), ${fmt(r.atWarn.cpuMicrosPerRequest, 1)} µs per answer; the default level reaches ${pct(r.server.requestsPerSec / r.atWarn.requestsPerSec)} of it (target ≥ 90 %)`);
    const codes = Object.entries(r.server.statusCodes).map(([c, n]) => `${c}: ${fmt(n)}`).join(', ');
    L.push(`- ${r.scenario}: ${[...r.judgement.notes, `status codes ${codes}`, ...extra].join('; ')}.`);
  }
  if (record.messages1m) {
    const m = record.messages1m;
    L.push('', '## After 1,000,000 stored messages', '');
    L.push('| | req/s | p50 / p97.5 / p99 ms | non-2xx | peak RSS MB |', '|---|---:|---:|---:|---:|');
    L.push(`| scenario 1, fresh process, before the fill | ${fmt(m.baseline.requestsPerSec)} | ${lat(m.baseline.latency)} | ${fmt(m.baseline.non2xx)} | ${fmt(m.baseline.peakRssMb, 1)} |`);
    L.push(`| scenario 1, fresh process, ${fmt(m.messagesStored)} messages stored | ${fmt(m.after.requestsPerSec)} | ${lat(m.after.latency)} | ${fmt(m.after.non2xx)} | ${fmt(m.after.peakRssMb, 1)} |`);
    L.push('', `Peak RSS grew ${pct(m.rssGrowth)} (target ≤ 20 %): ${m.met === undefined ? 'not judged' : m.met ? '**met**' : '**missed**'}.`);
  }
  L.push('');
  return L.join('\n');
}

/**
 * `existing` (bench/REPORT.md) with the section `key` replaced by `markdown`, or added after the
 * others; the page's title and the marked sections are all it keeps (pure).
 */
export function replaceReportSection(existing, key, markdown) {
  const start = `<!-- report:${key} -->`;
  const end = `<!-- /report:${key} -->`;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const title = '# Benchmark report\n\nOne section per kind of run, each rewritten by its own run of `npm run bench` (docs/performance.md: how to read them).\n';
  const sections = [...existing.matchAll(/<!-- report:([\w-]+) -->[\s\S]*?<!-- \/report:\1 -->/g)].map((m) => ({ key: m[1], text: m[0] }));
  const others = sections.filter((section) => section.key !== key);
  const index = sections.findIndex((section) => section.key === key);
  const ordered = index === -1 ? [...others.map((o) => o.text), block] : sections.map((section) => (section.key === key ? block : section.text));
  return `${title}\n${ordered.join('\n\n')}\n`;
}
