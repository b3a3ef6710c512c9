// Types of bench/lib/report.mjs for the unit tests that import it (test/unit/bench-rounds.test.ts);
// the benchmark itself is plain JavaScript run by Node.

export interface Judgement {
  met: boolean | undefined;
  notes: string[];
  /** Failures no round may have (judge()). */
  everyRound?: string[];
}

export interface MeasuredSide {
  rate?: number;
  latency: { p50?: number; p97_5?: number; p99: number };
  peakRssMb?: number;
  cpuMicrosPerRequest?: number;
  [key: string]: unknown;
}

export interface ScenarioRow {
  scenario: number;
  name?: string;
  round: number;
  ratio: number | undefined;
  server: MeasuredSide;
  bare?: MeasuredSide;
  judgement: Judgement;
  rounds?: { round: number; ratio: number | undefined; p99: number; cpuMicrosPerRequest?: number; peakRssMb?: number; stealShare?: (number | undefined)[]; met: boolean | undefined }[];
  [key: string]: unknown;
}

export interface ScenarioTarget {
  target: { ratio?: number; zeroNon2xx?: boolean; p99Ms?: number };
}

export function judge(s: ScenarioTarget, server: MeasuredSide & { non2xx?: number; reused?: number }, bare: MeasuredSide, smoke: boolean): Judgement;
export function medianRounds(rows: ScenarioRow[]): ScenarioRow[];
export function summaryTable(results: ScenarioRow[]): string;
export function reportMarkdown(record: Record<string, unknown>, file: string): string;

/** bench/REPORT.md with one marked section replaced or added. */
export function replaceReportSection(existing: string, key: string, markdown: string): string;

/** The fields judgeBeside() sets on a row compared with another scenario of its round. */
export function judgeBeside(row: ScenarioRow, other: ScenarioRow, share: number, smoke: boolean): { beside: { scenario: number; share: number; rateShare: number; cpuMicrosPerRequest?: number }; judgement: Judgement };

export interface GeneratorCeiling {
  bench: number;
  autocannon: number;
  share: number;
  connections: number;
  duration: number;
}
export function generatorCeilingNote(c: GeneratorCeiling): string;
export function peersTable(results: ScenarioRow[]): string[];
