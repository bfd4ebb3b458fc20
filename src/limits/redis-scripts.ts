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
  /** Reads the time: its last argument is the clock ('' for Redis's TIME). */
  readonly clock: boolean;
}

/**
 * `clock: false` for a script that needs no time (no TIME call inside it). A script with a
 * clock takes one more argument, after all of its own: '' for Redis's TIME (always, in the
 * service), or the time in ms a test sets (RedisLimiterOptions.now), so a test of the
 * windows never depends on how long the process was held up between two steps.
 */
function script(name: string, body: string, o: { clock: boolean } = { clock: true }): LuaScript {
  const clock =
    "local now = tonumber(ARGV[#ARGV])\n" +
    "if not now then local t = redis.call('TIME') now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) end\n";
  const source = o.clock ? clock + body : body;
  return { name, source, sha: createHash("sha1").update(source).digest("hex"), clock: o.clock };
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
 * Permits for one request, all or none, with the line of refused callers at each cap
 * (waiting-line.ts holds the rules and the in-process twin of this arithmetic).
 * KEYS, four per request in the caller's order: the permit set (member = permit id,
 * score = lease expiry), the live lane and the test lane of its line (member = caller,
 * score = first refusal in ms × 1024 + a counter within that ms), and the places' lapse
 * times (member = caller, score = ms). ARGV: caller ('' for none), lane (0 live, 1 test),
 * promoteAfterMs, graceMs, maxRetryAfterMs (0: none); then per request: max, leaseMs,
 * permitId, releaseEveryMs.
 * → {1, -1, 0} all taken | {0, i, retryAfterMs}: the i-th (0-based) was full (its slots
 * held plus the places ahead of this caller), nothing is held, and the caller has a
 * place in that cap's line (retryAfterForPlace in waiting-line.ts). Scores above 10^14 are passed as '%.0f' strings: Lua's own
 * number-to-string keeps only 14 digits.
 */
export const ACQUIRE_ALL = script(
  "acquireAll",
  `local caller = ARGV[1]
local lane = tonumber(ARGV[2])
local promote = tonumber(ARGV[3])
local grace = tonumber(ARGV[4])
local maxWait = tonumber(ARGV[5])
local PER_MS = 1024
local n = #KEYS / 4
local function num(x) return string.format('%.0f', x) end
-- Drops lapsed places at cap i; true when someone is still in line there.
local function lapse(i)
  local places = KEYS[4 * i]
  if redis.call('ZCARD', places) == 0 then return false end
  local gone = redis.call('ZRANGEBYSCORE', places, '-inf', now)
  for _, c in ipairs(gone) do
    redis.call('ZREM', KEYS[4 * i - 2], c)
    redis.call('ZREM', KEYS[4 * i - 1], c)
    redis.call('ZREM', places, c)
  end
  return redis.call('ZCARD', places) > 0
end
-- Places at cap i that go before this caller.
local function ahead(i)
  local live = KEYS[4 * i - 2]
  local test = KEYS[4 * i - 1]
  local nl = redis.call('ZCARD', live)
  local nt = redis.call('ZCARD', test)
  if caller == '' then return nl + nt end
  local agedBound = (now - promote) * PER_MS + PER_MS - 1
  if lane == 0 then
    local aged = redis.call('ZCOUNT', test, '-inf', num(agedBound))
    local r = redis.call('ZRANK', live, caller)
    if r then return aged + r end
    return aged + nl
  end
  local s = redis.call('ZSCORE', test, caller)
  if not s then return nl + nt end
  local r = redis.call('ZRANK', test, caller)
  if tonumber(s) <= agedBound then return r end
  return nl + r
end
-- A test place with live places waiting: ms until it is promoted (else 0).
local function untilPromoted(i)
  if caller == '' or lane ~= 1 or redis.call('ZCARD', KEYS[4 * i - 2]) == 0 then return 0 end
  local s = redis.call('ZSCORE', KEYS[4 * i - 1], caller)
  local since = now
  if s then since = math.floor(tonumber(s) / PER_MS) end
  return math.max(0, since + promote - now)
end
-- The line's keys at cap i live at least ms more (its last place lapses by then).
local function keepFor(i, ms)
  for k = 4 * i - 2, 4 * i do
    if redis.call('PTTL', KEYS[k]) < ms then redis.call('PEXPIRE', KEYS[k], ms) end
  end
end
local function retryAfter(releases, every, promoted)
  local ms = releases * every
  if promoted > 0 then ms = math.max(ms, promoted + every) end
  ms = math.max(1, math.ceil(ms / 1000)) * 1000
  if maxWait > 0 then ms = math.min(ms, math.max(1000, math.ceil(maxWait / 1000) * 1000)) end
  return ms
end
for i = 1, n do
  local held_key = KEYS[4 * i - 3]
  local a = 5 + 4 * (i - 1)
  local max = tonumber(ARGV[a + 1])
  local lease = tonumber(ARGV[a + 2])
  redis.call('ZREMRANGEBYSCORE', held_key, '-inf', now)
  local held = redis.call('ZCARD', held_key)
  local before = 0
  if lapse(i) then before = ahead(i) end
  if held + before >= max then
    for j = i - 1, 1, -1 do redis.call('ZREM', KEYS[4 * j - 3], ARGV[5 + 4 * (j - 1) + 3]) end
    local wait = retryAfter(math.max(1, held + before - max + 1), tonumber(ARGV[a + 4]), untilPromoted(i))
    if caller ~= '' then
      local untilMs = now + wait + grace
      -- Its places at the other caps last until it is due back too.
      for j = 1, n do
        if KEYS[4 * j] ~= KEYS[4 * i] and lapse(j) and redis.call('ZSCORE', KEYS[4 * j], caller) then
          redis.call('ZADD', KEYS[4 * j], 'GT', untilMs, caller)
          keepFor(j, wait + grace)
        end
      end
      if not redis.call('ZSCORE', KEYS[4 * i], caller) then
        local line = KEYS[4 * i - 2 + lane]
        local base = now * PER_MS
        local top = redis.call('ZREVRANGEBYSCORE', line, num(base + PER_MS - 1), num(base), 'WITHSCORES', 'LIMIT', 0, 1)
        local score = base
        if top[2] then score = math.min(tonumber(top[2]) + 1, base + PER_MS - 1) end
        redis.call('ZADD', line, num(score), caller)
      end
      redis.call('ZADD', KEYS[4 * i], untilMs, caller)
      keepFor(i, wait + grace)
    end
    return {0, i - 1, wait}
  end
  redis.call('ZADD', held_key, now + lease, ARGV[a + 3])
  if redis.call('PTTL', held_key) < lease then redis.call('PEXPIRE', held_key, lease) end
end
if caller ~= '' then
  for i = 1, n do
    if redis.call('ZREM', KEYS[4 * i], caller) == 1 then
      redis.call('ZREM', KEYS[4 * i - 2], caller)
      redis.call('ZREM', KEYS[4 * i - 1], caller)
    end
  end
end
return {1, -1, 0}`,
);

/** KEYS permit sets; ARGV the permit id to remove from each → how many were still there. */
export const RELEASE_ALL = script(
  "releaseAll",
  `local removed = 0
for i = 1, #KEYS do removed = removed + redis.call('ZREM', KEYS[i], ARGV[i]) end
return removed`,
  { clock: false },
);
