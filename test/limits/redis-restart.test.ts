// The Redis limiter through a Redis restart, on a private redis-server (never the shared
// one other suites use): calls made while Redis is down or frozen reject promptly with
// LimiterUnavailableError (the gateway answers 503) instead of hanging, release() does not
// throw, and the same limiter works again once Redis is back — with an empty script cache,
// so the NOSCRIPT fallback is exercised too. Needs REDIS_URL (as the marker that real
// servers are available) and the redis-server binary.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { LimiterUnavailableError, createRedisLimiter } from "../../src/limits/index.ts";
import { freePort } from "../support/free-port.ts";

const hasBinary = spawnSync("redis-server", ["--version"]).status === 0;
const skip = !process.env.REDIS_URL ? "REDIS_URL not set" : !hasBinary ? "redis-server not installed" : false;


async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  for (let i = 0; i < 100; i++) {
    if (spawnSync("redis-cli", ["-p", String(port), "ping"]).stdout?.toString().trim() === "PONG") return child;
    await sleep(50);
  }
  child.kill("SIGKILL");
  throw new Error("private redis-server did not start");
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

test("redis: the limiter fails fast during a Redis outage and recovers after a restart", { skip, timeout: 30_000 }, async () => {
  const port = await freePort();
  let server = await startRedis(port);
  const errors: Error[] = [];
  const limiter = createRedisLimiter({
    url: `redis://127.0.0.1:${port}`,
    keyPrefix: "restart-test:",
    readyTimeoutMs: 300,
    commandTimeoutMs: 500,
    onError: (e) => errors.push(e),
  });
  try {
    assert.equal((await limiter.hit("k", 100, 60_000)).allowed, true);
    const held = await limiter.acquire("slot", 1, 60_000);
    assert.ok(held.ok);

    // A Redis that accepts the connection but stops answering: the command timeout applies.
    server.kill("SIGSTOP");
    try {
      await assert.rejects(limiter.hit("k", 100, 60_000), LimiterUnavailableError);
    } finally {
      server.kill("SIGCONT");
    }
    assert.equal((await limiter.hit("k", 100, 60_000)).allowed, true, "usable again once Redis answers");

    await stopRedis(server);
    await assert.rejects(limiter.hit("k", 100, 60_000), LimiterUnavailableError);
    await assert.rejects(limiter.acquire("slot", 1, 60_000), LimiterUnavailableError);
    await assert.rejects(held.permit.renew(), LimiterUnavailableError);
    assert.equal(await limiter.ping(), false);
    await held.permit.release(); // must not throw: the caller is in a finally block
    assert.ok(errors.length > 0, "connection errors reach onError");

    server = await startRedis(port); // empty: no keys, no cached scripts
    let back = false;
    for (let i = 0; i < 50 && !back; i++) {
      back = await limiter.ping();
      if (!back) await sleep(100);
    }
    assert.equal(back, true, "limiter reconnected on its own");
    assert.deepEqual(await limiter.hit("k", 2, 60_000), { allowed: true, remaining: 1, retryAfterMs: 0 });
    const again = await limiter.acquire("slot", 1, 60_000);
    assert.ok(again.ok);
    assert.equal((await limiter.acquire("slot", 1, 60_000)).ok, false);
  } finally {
    await limiter.close();
    await stopRedis(server);
  }
});
