// Lua for the Redis limiter. Each script is one atomic step, so two gateway processes
// never both take the last slot. Time comes from redis.call('TIME') — the one clock
// every gateway process shares — in whole milliseconds (an integer keeps scores exact
// when Lua turns numbers into strings, which keeps only 14 significant digits).
// Scripts that call TIME and then write are replicated by effects, the default since
// Redis 5 and the only mode in Redis 7.
//
// Window logs are sorted sets: member = a unique hit id, score = hit time. A hit
// counts while now - score < window. Permit sets are sorted sets: member = permit id,
// score = lease expiry; a lease is live while score > now. The arithmetic matches
// sliding-log.ts and memory-limiter.ts. Expiries only ever grow, so a key shared by
// callers with different windows lives as long as the longest one needs.
import { createHash } from "node:crypto";

export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

/** `clock: false` for a script that needs no time (no TIME call inside it). */
function script(name: string, body: string, o: { clock: boolean } = { clock: true }): LuaScript {
  const clock = "local t = redis.call('TIME')\nlocal now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n";
  const source = o.clock ? clock + body : body;
  return { name, source, sha: createHash("sha1").update(source).digest("hex") };
}

/** KEYS[1] log; ARGV limit, windowMs, hitId → {allowed 0|1, remaining, retryAfterMs} */
export const HIT = script(
  "hit",
  `local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  if redis.call('PTTL', KEYS[1]) < window then redis.call('PEXPIRE', KEYS[1], window) end
  return {1, limit - count - 1, 0}
end
local edge = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
return {0, 0, math.max(1, tonumber(edge[2]) + window - now)}`,
);

/** KEYS[1] log; ARGV limit, windowMs → {over 0|1, retryAfterMs}. Writes nothing. */
export const IS_OVER = script(
  "isOver",
  `local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cutoff = '(' .. (now - window)
local count = redis.call('ZCOUNT', KEYS[1], cutoff, '+inf')
if count < limit then return {0, 0} end
local edge = redis.call('ZRANGEBYSCORE', KEYS[1], cutoff, '+inf', 'WITHSCORES', 'LIMIT', count - limit, 1)
return {1, math.max(1, tonumber(edge[2]) + window - now)}`,
);

/**
 * KEYS[1] log; ARGV windowMs, hitId, maxEntries → count in window. Keeps only the newest
 * maxEntries so a flood of events cannot grow the set without bound; the count then
 * saturates at maxEntries.
 */
export const RECORD = script(
  "record",
  `local window = tonumber(ARGV[1])
local cap = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZADD', KEYS[1], now, ARGV[2])
local count = redis.call('ZCARD', KEYS[1])
if count > cap then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, count - cap - 1)
  count = cap
end
if redis.call('PTTL', KEYS[1]) < window then redis.call('PEXPIRE', KEYS[1], window) end
return count`,
);

/** KEYS[1] permit set; ARGV permitId, leaseMs → 1 renewed | 0 lease already gone */
export const RENEW = script(
  "renew",
  `local lease = tonumber(ARGV[2])
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry then return 0 end
if tonumber(expiry) <= now then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[1])
if redis.call('PTTL', KEYS[1]) < lease then redis.call('PEXPIRE', KEYS[1], lease) end
return 1`,
);

/**
 * KEYS permit sets, in the caller's order; ARGV max, leaseMs, permitId for each key in
 * turn → {1, -1} all taken | {0, i} the i-th (0-based) was full and nothing is held.
 * Per key: expired leases dropped, refused when full, else a lease added; the ones
 * already taken are removed again on a refusal: one script, so no other caller sees the
 * half-taken state. A single permit is a set of one.
 */
export const ACQUIRE_ALL = script(
  "acquireAll",
  `for i = 1, #KEYS do
  local max = tonumber(ARGV[3 * i - 2])
  local lease = tonumber(ARGV[3 * i - 1])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) >= max then
    for j = i - 1, 1, -1 do redis.call('ZREM', KEYS[j], ARGV[3 * j]) end
    return {0, i - 1}
  end
  redis.call('ZADD', KEYS[i], now + lease, ARGV[3 * i])
  if redis.call('PTTL', KEYS[i]) < lease then redis.call('PEXPIRE', KEYS[i], lease) end
end
return {1, -1}`,
);

/** KEYS permit sets; ARGV the permit id to remove from each → how many were still there. */
export const RELEASE_ALL = script(
  "releaseAll",
  `local removed = 0
for i = 1, #KEYS do removed = removed + redis.call('ZREM', KEYS[i], ARGV[i]) end
return removed`,
  { clock: false },
);
