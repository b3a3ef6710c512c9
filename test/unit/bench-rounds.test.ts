import { describe, expect, it } from 'vitest';
import { judge, medianRounds, replaceReportSection, reportMarkdown, summaryTable, type ScenarioRow } from '../../bench/lib/report.mjs';

/** The targets of bench/run.mjs's scenarios that these tests use. */
const TARGETS: Record<number, { ratio?: number; zeroNon2xx?: boolean; p99Ms?: number }> = {
  1: { ratio: 0.4, zeroNon2xx: true },
  2: { ratio: 0.3 },
  3: { ratio: 0.5 },
  7: { p99Ms: 10 },
};

/** A measured row as bench/run.mjs builds it, judged by the benchmark's own judge(). */
function row(scenario: number, round: number, figures: { ratio?: number; p99?: number; rssMb?: number; non2xx?: number; smoke?: boolean }): ScenarioRow {
  const server = { rate: (figures.ratio ?? 0) * 1000, latency: { p99: figures.p99 ?? 5 }, non2xx: figures.non2xx ?? 0, reused: 0, peakRssMb: figures.rssMb ?? 150, cpuMicrosPerRequest: 80 + round };
  const bare = { rate: 1000, latency: { p99: 2 } };
  return { scenario, round, ratio: figures.ratio, server, bare, judgement: judge({ target: TARGETS[scenario] ?? {} }, server, bare, figures.smoke ?? false) };
}

describe('bench --rounds: each scenario judged by its median round (issue #6, docs/performance.md)', () => {
  it('one round: the row as measured, with no round list', () => {
    const only = row(1, 1, { ratio: 0.42 });
    expect(medianRounds([only])).toEqual([only]);
  });

  it('three rounds: the median round by ratio, every figure from that one round', () => {
    const [picked] = medianRounds([row(1, 1, { ratio: 0.3 }), row(1, 2, { ratio: 0.5 }), row(1, 3, { ratio: 0.41 })]);
    expect(picked?.round).toBe(3);
    expect(picked?.ratio).toBe(0.41);
    expect(picked?.server.cpuMicrosPerRequest).toBe(83);
    expect(picked?.judgement.met).toBe(true);
    expect(picked?.rounds?.map((r) => [r.round, r.ratio, r.met])).toEqual([
      [1, 0.3, false],
      [2, 0.5, true],
      [3, 0.41, true],
    ]);
  });

  it('scenario 7: the median round by p99 latency', () => {
    const [picked] = medianRounds([row(7, 1, { p99: 9 }), row(7, 2, { p99: 21 }), row(7, 3, { p99: 12 })]);
    expect(picked?.round).toBe(3);
    expect(picked?.server.latency.p99).toBe(12);
  });

  it('an even number of rounds: the worse of the two middle ones', () => {
    const [ratioPick] = medianRounds([row(1, 1, { ratio: 0.3 }), row(1, 2, { ratio: 0.5 }), row(1, 3, { ratio: 0.45 }), row(1, 4, { ratio: 0.35 })]);
    expect(ratioPick?.ratio).toBe(0.35);
    const [p99Pick] = medianRounds([row(7, 1, { p99: 8 }), row(7, 2, { p99: 14 })]);
    expect(p99Pick?.server.latency.p99).toBe(14);
  });

  it('scenarios keep their order and are judged apart', () => {
    const picked = medianRounds([row(3, 1, { ratio: 0.4 }), row(1, 1, { ratio: 0.2 }), row(3, 2, { ratio: 0.6 }), row(1, 2, { ratio: 0.3 })]);
    expect(picked.map((r) => [r.scenario, r.ratio])).toEqual([
      [3, 0.4],
      [1, 0.2],
    ]);
  });

  it('peak RSS over 200 MB in any round fails the scenario, even when the median round stayed under', () => {
    const [picked] = medianRounds([row(2, 1, { ratio: 0.31 }), row(2, 2, { ratio: 0.35, rssMb: 204 }), row(2, 3, { ratio: 0.33 })]);
    expect(picked?.round).toBe(3);
    expect(picked?.judgement.met).toBe(false);
    expect(picked?.judgement.notes).toContain('round 2: peak RSS 204 MB (target ≤ 200 MB)');
  });

  it('scenario 1: a non-2xx answer in any round fails it, even when the median round had none', () => {
    const [picked] = medianRounds([row(1, 1, { ratio: 0.45, non2xx: 3 }), row(1, 2, { ratio: 0.41 }), row(1, 3, { ratio: 0.43 })]);
    expect(picked?.round).toBe(3);
    expect(picked?.judgement.met).toBe(false);
    expect(picked?.judgement.notes).toContain('round 1: 3 non-2xx (target 0)');
  });

  it('a smoke run stays unjudged whatever its memory', () => {
    const [picked] = medianRounds([row(1, 1, { ratio: 0.3, smoke: true }), row(1, 2, { ratio: 0.4, rssMb: 250, smoke: true })]);
    expect(picked?.judgement.met).toBeUndefined();
  });
});

describe('bench report: the CPU the host took beside each measurement (docs/performance.md, Running the benchmark)', () => {
  it('shows, for each side of a ratio, the share of the machine\'s CPU its hypervisor gave to other guests', () => {
    const measured = row(3, 1, { ratio: 0.45 });
    measured.server.stealShare = 0.183;
    measured.server.statusCodes = { 200: 450 };
    measured.bare = { ...measured.bare, latency: { p99: 2 }, stealShare: 0.01 };
    expect(summaryTable([measured])).toContain('18.3 % / 1.0 %');
    const record = { date: 'now', database: 'sqlite', cores: 2, node: 'v20', loadAverageAtStart: [0], loadAverageAtEnd: [0], rounds: 1, connections: 50, webhooks: 10, results: [{ ...measured, name: 'x', duration: 10 }] };
    expect(reportMarkdown(record, 'r.json')).toContain('| 18.3 % / 1.0 % |');
  });
});

describe('bench/REPORT.md keeps one section per kind of run (issue #26: PostgreSQL beside SQLite)', () => {
  it('a run replaces its own section and keeps the others, in their order', () => {
    const first = replaceReportSection('', 'sqlite', '## SQLite\n\nold');
    const both = replaceReportSection(first, 'postgres', '## PostgreSQL + Redis, one instance\n\npg');
    const again = replaceReportSection(both, 'sqlite', '## SQLite\n\nnew');
    expect(again.startsWith('# Benchmark report\n')).toBe(true);
    expect(again).toContain('new');
    expect(again).not.toContain('old');
    expect(again.indexOf('<!-- report:sqlite -->')).toBeLessThan(again.indexOf('<!-- report:postgres -->'));
    expect(again.match(/<!-- report:sqlite -->/g)).toHaveLength(1);
  });

  it('a PostgreSQL row states the target it was judged on, and none where none is set', () => {
    const row = (scenario: number, target: object) => ({ scenario, name: `s${scenario}`, target, duration: 8, round: 1, ratio: 0.2, server: { rate: 200, latency: { p50: 1, p97_5: 2, p99: 3 }, non2xx: 0, peakRssMb: 100, statusCodes: { 204: 1600 } }, bare: { rate: 1000, latency: { p50: 0, p97_5: 1, p99: 1 }, peakRssMb: 60 }, judgement: { met: true, notes: [] } });
    const record = { date: 'd', database: 'postgres', cores: 2, node: 'v20', loadAverageAtStart: [0, 0, 0], loadAverageAtEnd: [0, 0, 0], connections: 50, webhooks: 10, rounds: 1, results: [row(1, { ratio: 0.15, zeroNon2xx: true }), row(2, {})] };
    const markdown = reportMarkdown(record, 'r.json');
    expect(markdown).toContain('## PostgreSQL + Redis, one instance');
    expect(markdown).toContain('≥ 15 %, 0 non-2xx; RSS ≤ 200 MB');
    expect(markdown).toContain('none set; RSS ≤ 200 MB');
  });
});
