/**
 * What: rate-limit/bucket.ts's rule as a Lua fragment, for every script that spends or reads a
 * bucket atomically in Redis (rate-limit/redis-store.ts alone, realtime/redis-outbox.ts with the
 * publishes it carries), so the rule is written once and both scripts keep it identical. Here,
 * below both, because realtime/ may not import rate-limit/ (eslint.config.js).
 * Invariant: reads `mode` ('take' | 'peek'), `limit`, `window`, `now` and `cost`, already
 * defined as Lua locals; works on KEYS[1] (fields c: count, r: reset time); leaves `allowed` (0 or
 * 1), `count` and `reset` set for the script to return. `now` is the caller's injected clock, as
 * in the memory store, so both stores behave identically under the same tests.
 * Tested: test/storage/bucket-stores.test.ts (both stores under one suite), test/storage/redis-outbox.test.ts.
 */
export const BUCKET_RULE_LUA = `
count = tonumber(redis.call('HGET', KEYS[1], 'c') or '0')
reset = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
if reset <= now then
  count = 0
  reset = now + window
end
allowed = 0
if mode == 'take' then
  if count + cost <= limit then
    count = count + cost
    allowed = 1
    redis.call('HSET', KEYS[1], 'c', count, 'r', reset)
    redis.call('PEXPIRE', KEYS[1], reset - now + 1000)
  end
elseif count < limit then
  allowed = 1
end
`;
