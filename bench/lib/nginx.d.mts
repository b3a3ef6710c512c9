// Types of bench/lib/nginx.mjs for the reliability test that puts nginx in front of instances
// (test/reliability/nginx-instances.test.ts); the benchmark itself is plain JavaScript.

export const NGINX: string;

export interface FrontEnd {
  name: string;
  port: number;
  /** host:port of each upstream server. */
  upstreams: string[];
}

export function nginxMissing(): string | undefined;

export function nginxConfig(options: { dir: string; frontEnds: FrontEnd[]; workers?: number; keepalive?: number; runAsRoot?: boolean }): string;

export interface RunningNginx {
  dir: string;
  pid: number;
  pids(): number[];
  frontEnds: FrontEnd[];
  base(name: string): string;
  errorLog(): string;
  stop(): Promise<void>;
}

export function startNginx(options: { frontEnds: FrontEnd[]; workers?: number; keepalive?: number }): Promise<RunningNginx>;
