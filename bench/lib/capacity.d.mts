// Types of bench/lib/capacity.mjs for its unit test (test/unit/capacity.test.ts).

export const DEFAULTS: {
  utilisation: number;
  postgresMaxCores: number;
  postgresMaxWalMbPerSec: number;
  redisCoresPerNode: number;
  bytesPerMessage: number;
  bytesPerWebhook: number;
  bytesPerBucket: number;
  bucketWindowSeconds: number;
  walBytesPerMessage: number;
};

export const LOAD_SCENARIOS: Record<'executes' | 'grants' | 'bearer', number[]>;

export interface Costs {
  instanceUs: number;
  nginxUs: number;
  postgresUs: number;
  commits: number;
  statements: number;
  redisCalls: number;
  redisUs: number;
  measuredRate: number;
}

export interface Load {
  executes?: number;
  grants?: number;
  bearer?: number;
  webhooks?: number;
  retentionDays?: number;
}

export interface Sizing {
  load: Load;
  instances: number;
  instanceCoresBusy: number;
  nginxCores: number;
  postgres: { cores: number; coresBusy: number; commitsPerSec: number; statementsPerSec: number; walMbPerSec: number; messagesStorageTb: number; webhooksStorageGb: number; retentionDays: number; enough: boolean };
  redis: { nodes: number; coresBusy: number; opsPerSec: number; liveBuckets: number; memoryMb: number; enough: boolean };
  limits: string[];
}

export interface Prediction {
  scenario: number;
  instances: number;
  coresAvailable: number;
  coresUsedByN: number | undefined;
  generatorUs: number;
  perAnswerUs: number;
  predicted: number;
  /** The prediction with the cores the N-instance run got. */
  atUsedCores: number | undefined;
  measured: number;
  ratio: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the bench's JSON record is untyped
type BenchRecord = any;

export function costsFromRecord(record: BenchRecord): Partial<Record<'executes' | 'grants' | 'bearer', Costs>>;
export function sizeFor(load: Load, costs: Partial<Record<'executes' | 'grants' | 'bearer', Costs>>, options?: Partial<typeof DEFAULTS>): Sizing;
export function predictThisMachine(record: BenchRecord, scenario: number): Prediction | undefined;
