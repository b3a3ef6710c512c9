// Types of bench/lib/raw-load.mjs for the unit tests that import it (test/unit/bench-load.test.ts).

export function requestBuffer(request: { method?: string; path: string; host: string; headers?: Record<string, string>; body?: string | Buffer | object }): Buffer;

export interface RawLoadResult {
  requestsPerSec: number;
  totalRequests: number;
  latency: { p50?: number; p97_5?: number; p99?: number; max?: number; mean?: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  duration: number;
  reused: number;
}

export function rawLoad(options: { base: string; pool: Buffer[]; once?: boolean; connections: number; duration: number; onResponse?: (status: number, headers: Record<string, string>) => void }): Promise<RawLoadResult>;
