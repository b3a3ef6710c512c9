/**
 * What: live-update publishes ride along with the next bucket operation to the same Redis, in one
 * script call (issue #26 §1): an execute costs one Redis round trip instead of two. An execute's
 * publish is made after its insert committed, so it can only ride on a later request's bucket
 * take: publishes wait up to RIDE_WAIT_MS for one, then go by themselves, all those waiting in
 * one call. Under load the next take comes within a millisecond or two; a quiet instance delays a
 * live update to another instance's viewers by at most RIDE_WAIT_MS.
 * Invariant: a channel's event is PUBLISHed only when another instance watches the channel (its
 * watchers set, kept fresh by redis-channel-events.ts, has a member other than the sender that has
 * not expired); the check runs inside the same script, on Redis's clock.
 * Tested: test/storage/redis-channel-events.test.ts, test/storage/redis-outbox.test.ts.
 */
import type { Redis } from 'ioredis';
import { BUCKET_RULE_LUA } from '../storage/redis-bucket-script.js';

/**
 * KEYS: [bucket key when ARGV[1] ≠ 'none'], then per event its channel and its watchers set.
 * ARGV: mode ('take' | 'peek' | 'none'), limit, window, now, cost, then per event origin and payload.
 * The bucket part is storage/redis-bucket-script.ts's rule (rate-limit/bucket.ts's rule in Lua), as in redis-store.ts. Returns {allowed, count, reset}.
 */
const SCRIPT = `
local mode = ARGV[1]
local allowed, count, reset = 0, 0, 0
local k = 1
if mode ~= 'none' then
  local limit = tonumber(ARGV[2])
  local window = tonumber(ARGV[3])
  local now = tonumber(ARGV[4])
  local cost = tonumber(ARGV[5])
${BUCKET_RULE_LUA}
  k = 2
end
if #KEYS > k then
  local t = redis.call('TIME')
  local clock = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local a = 6
  while k < #KEYS do
    local watchers = redis.call('ZCOUNT', KEYS[k + 1], clock, '+inf')
    if watchers > 0 then
      local mine = redis.call('ZSCORE', KEYS[k + 1], ARGV[a])
      if mine and tonumber(mine) >= clock then watchers = watchers - 1 end
      if watchers > 0 then redis.call('PUBLISH', KEYS[k], ARGV[a + 1]) end
    end
    k = k + 2
    a = a + 2
  end
end
return {allowed, count, reset}
`;

/**
 * How long a publish waits for a bucket operation to carry it. 10 ms is below what a person sees
 * in a live view, and an instance answering 100 executes/s or more almost always takes a bucket
 * within it: a quiet instance's lone execute costs one Redis round trip, not two (docs/performance.md
 * §Several instances).
 */
export const RIDE_WAIT_MS = 10;

type ScriptCall = (numberOfKeys: number, ...args: (string | number)[]) => Promise<unknown>;

export class RedisOutbox {
  private keys: string[] = [];
  private args: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly script: ScriptCall;
  /** Hears whether the last call that carried publishes reached Redis (for the "live updates degraded" log). */
  onPublished: (error: unknown) => void = () => undefined;

  constructor(readonly client: Redis) {
    client.defineCommand('ghTakePublish', { lua: SCRIPT });
    const command = (client as unknown as { ghTakePublish: ScriptCall }).ghTakePublish;
    this.script = (...args) => command.apply(client, args);
  }

  /** Publishes `payload` on `channelKey` if another instance than `origin` watches it (`watchersKey`). */
  publish(channelKey: string, watchersKey: string, origin: string, payload: string): void {
    this.keys.push(channelKey, watchersKey);
    this.args.push(origin, payload);
    this.timer ??= setTimeout(() => void this.flush(), RIDE_WAIT_MS);
  }

  /** The bucket rule on `bucketKey`, carrying every pending publish. Resolves to {allowed, count, reset}. */
  bucket(mode: 'take' | 'peek', bucketKey: string, limit: number, windowMs: number, now: number, cost: number): Promise<unknown> {
    return this.call(mode, bucketKey, [String(limit), String(windowMs), String(now), String(cost)]);
  }

  /** Sends what no bucket operation picked up within RIDE_WAIT_MS, or on close; never rejects. */
  async flush(): Promise<void> {
    if (this.keys.length === 0) return;
    await this.call('none', undefined, ['0', '0', '0', '0']).catch(() => undefined);
  }

  private call(mode: 'take' | 'peek' | 'none', bucketKey: string | undefined, numbers: string[]): Promise<unknown> {
    const keys = this.keys;
    const args = this.args;
    const carries = keys.length > 0;
    if (carries) {
      this.keys = [];
      this.args = [];
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const allKeys = bucketKey === undefined ? keys : [bucketKey, ...keys];
    const reply = this.script(allKeys.length, ...allKeys, mode, ...numbers, ...args);
    if (carries) {
      reply.then(
        () => this.onPublished(undefined),
        (error: unknown) => this.onPublished(error),
      );
    }
    return reply;
  }
}
