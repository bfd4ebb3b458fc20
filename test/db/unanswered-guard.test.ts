// The pg adapter's "not answering" guard (src/db/postgres-db.ts) against its two
// causes. Our own event loop held up (a CPU-starved host): a client-side bound fires
// late although the server answered, and the calls waiting on the pool must not be cut
// for it. A server that accepts connections and never answers, with the loop held up
// too: the guard asks the server on a connection of its own, gets no answer, and the
// waiting calls are cut as before. The stall is injected by blocking the event loop;
// the bounds are shortened through openPostgres's test option.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { openPostgres } from "../../src/db/postgres-db.ts";
import { isStoreUnavailable } from "../../src/http/store-unavailable.ts";

/** Holds the event loop for `ms`, as a starved process's loop is held. */
function holdLoop(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Every call's end: undefined for a success, else its error's message. */
function ends(calls: Promise<unknown>[]): Promise<(string | undefined)[]> {
  return Promise.all(calls.map((p) => p.then(() => undefined, (err: unknown) => (err instanceof Error ? err.message : String(err)))));
}

const notAnswering = (m: string | undefined) => m !== undefined && /not answering/.test(m);

test("our own loop held up past a query bound: the server answers, so the calls waiting on the pool are not cut", { skip: process.env.DATABASE_URL ? false : "DATABASE_URL is not set" }, async () => {
  const db = openPostgres(process.env.DATABASE_URL!, 2, { applicationName: "pd-guard-test", bounds: { queryTimeoutMs: 500 } });
  try {
    await Promise.all([db.query("SELECT 1"), db.query("SELECT 1")]);
    // Two statements on the wire (answered after 0.1 s), eighteen waiting for a
    // connection; then the loop stops for longer than the bound while the server
    // answers into the sockets. Held from the check phase, the loop's next turn runs
    // the two bounds' timers before it reads the sockets, as a starved process does.
    const calls = Array.from({ length: 20 }, () => db.query("SELECT pg_sleep(0.1)"));
    await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setImmediate(r));
    holdLoop(2_000);
    const ended = await ends(calls);
    const failed = ended.filter((m) => m !== undefined);
    assert.deepEqual(ended.filter(notAnswering), [], "no waiting call cut short as 'not answering'");
    assert.ok(failed.length <= 2, `at most the statements whose own bound fired late fail: ${failed.join("; ")}`);
    // And no pause follows: the next call is served.
    assert.deepEqual(await db.query("SELECT 1 AS x"), [{ x: 1 }]);
  } finally {
    await db.close();
  }
});

test("a server that never answers, with our loop held up too: asked on its own connection, then the waiting calls are cut", async () => {
  // Accepts connections (as the kernel does for a frozen server) and never answers.
  const sockets = new Set<Socket>();
  const silent = createServer((s) => {
    sockets.add(s);
    s.on("error", () => {});
  });
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  const { port } = silent.address() as AddressInfo;
  const db = openPostgres(`postgres://nobody:none@127.0.0.1:${port}/none`, 2, {
    applicationName: "pd-guard-test",
    // A stall is kept in mind for one query bound: the handshakes that time out within it, punctual or not, ask the server first.
    bounds: { queryTimeoutMs: 5_000, connectTimeoutMs: 500 },
  });
  try {
    const calls = Array.from({ length: 24 }, () => db.query("SELECT 1"));
    await new Promise((r) => setImmediate(r));
    holdLoop(1_500);
    const ended = await ends(calls);
    assert.ok(ended.every((m) => m !== undefined), "every call fails");
    const errors = await Promise.all(calls.map((p) => p.catch((e: unknown) => e)));
    for (const e of errors) assert.ok(isStoreUnavailable(e), `a store error: ${String(e)}`);
    // The calls still waiting for a connection were cut once the probe got no answer
    // (2 s), instead of each waiting for a connection and its own handshake bound in turn
    // (two at a time, 0.5 s each: 6 s for all).
    assert.ok(ended.filter(notAnswering).length >= 8, `waiting calls cut: ${ended.join("; ")}`);
  } finally {
    await db.close();
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  }
});
