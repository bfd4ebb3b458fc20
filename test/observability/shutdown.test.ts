// Graceful shutdown of a real server process (SIGTERM), on both store set-ups:
// - a paid call in flight when the signal arrives still gets its 200 and is charged
//   once; new connections are refused at once; the process exits 0 with no hold open
//   and (Redis) no permit held;
// - a call still running when its deadline passes during the shutdown ends as a 504
//   whose hold and permits are given back before the stores close, and nothing is
//   charged.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { openDb } from "../../src/db/index.ts";
import { createRedisLimiter } from "../../src/limits/index.ts";
import { fixture } from "../support/harness.ts";
import { assertSettled } from "../support/money-checks.ts";
import { GLOBAL_KEY, heldPermits, orgLiveKey } from "../support/permits.ts";
import { outcomeOf, sendRemovebg, type Outcome } from "../support/removebg-request.ts";
import { adminClient, over, setUpCustomer, startServer, stopAll, type ServerProcess } from "../support/server-process.ts";
import { STACKS, openStack, type OpenedStack } from "../support/stacks.ts";
import { poll } from "../support/poll.ts";

const IMAGE = fixture("images/orient-upright.png"); // 64×48: preview tier, 22 KRW
const PREVIEW = 22;
const CREDIT = 1000;
// A Redis database number no other suite uses (see test/support/stacks.ts).
const REDIS_DB = 8;
const GLOBAL_MAX = 32; // the default GLOBAL_CONCURRENCY

/** Opens a brand-new TCP connection (never a pooled keep-alive one): "refused" or "connected". */
function tryConnect(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED" ? "refused" : err.code ?? err.message));
  });
}

const hasLine = (server: ServerProcess, msg: string) => server.lines.some((l) => l.includes(`"msg":"${msg}"`));

for (const stack of STACKS) {
  describe(`graceful shutdown [${stack.name}]`, { skip: stack.skip, timeout: 180_000 }, () => {
    let opened: OpenedStack | undefined;
    before(async () => {
      opened = await openStack(stack, REDIS_DB, { dataDir: true });
    });
    after(async () => {
      await stopAll();
      await opened?.close();
    });

    /** The stores the stopped server used, opened the way the service opens them. */
    async function afterwards(orgId: string) {
      const db = await openDb(opened!.embedded ? { dataDir: opened!.pgliteDir! } : { databaseUrl: opened!.env.DATABASE_URL, dataDir: "memory://" });
      try {
        const summary = await assertSettled(db, orgId);
        let permits: { org: number; global: number } | undefined;
        if (!opened!.embedded) {
          const limiter = createRedisLimiter({ url: opened!.env.REDIS_URL! });
          try {
            permits = { org: await heldPermits(limiter, orgLiveKey(orgId), 2), global: await heldPermits(limiter, GLOBAL_KEY, GLOBAL_MAX) };
          } finally {
            await limiter.close();
          }
        }
        return { summary, permits };
      } finally {
        await db.close();
      }
    }

    /** Starts a paid call and resolves once its hold is taken (the call is then in the product). */
    async function paidCallInFlight(server: ServerProcess) {
      const admin = adminClient(server.url);
      const c = await setUpCustomer(admin, { creditKrw: CREDIT });
      const call: Promise<Outcome> = sendRemovebg(over(server.url), c.liveKey, { image_file: IMAGE, size: "preview" }).then(outcomeOf);
      await poll("the hold", () => admin("GET", `/orgs/${c.orgId}`), (r) => r.json.availableKrw === CREDIT - PREVIEW, 30_000);
      return { c, call };
    }

    test("an in-flight call finishes and is charged once; new connections are refused; exit 0", async () => {
      const server = await startServer({ ...opened!.env, STUB_DELAY_MS: "3000" });
      const { c, call } = await paidCallInFlight(server);

      process.kill(server.pid, "SIGTERM");
      await poll("the shutdown to start", async () => hasLine(server, "shutting down"), Boolean, 30_000);
      assert.equal(await tryConnect(server.url), "refused", "the listening socket is closed at once");

      const answer = await call;
      assert.equal(answer.status, 200, JSON.stringify(answer));
      assert.equal(answer.chargedKrw, PREVIEW);
      const exit = await server.exited;
      assert.deepEqual(exit, { code: 0, signal: null }, server.lines.join("\n"));
      assert.ok(hasLine(server, "stopped"));
      assert.ok(!server.lines.some((l) => l.includes("abandoned")), "nothing was left running");

      const { summary, permits } = await afterwards(c.orgId);
      assert.deepEqual(
        { balance: summary.balanceKrw, captures: summary.captures, captured: summary.capturedKrw, open: summary.openHolds },
        { balance: CREDIT - PREVIEW, captures: 1, captured: PREVIEW, open: 0 },
      );
      if (permits) assert.deepEqual(permits, { org: 0, global: 0 });
    });

    test("a call whose deadline passes during shutdown ends 504, uncharged, its hold and permits given back", async () => {
      // The stub takes longer than the whole deadline, so the call cannot finish.
      const server = await startServer({ ...opened!.env, STUB_DELAY_MS: "8000", DEADLINE_MS: "4000" });
      const { c, call } = await paidCallInFlight(server);

      process.kill(server.pid, "SIGTERM");
      const answer = await call;
      assert.equal(answer.status, 504, JSON.stringify(answer));
      assert.equal(answer.code, "upstream_timeout");
      assert.equal(answer.chargedKrw, undefined);
      const exit = await server.exited;
      assert.deepEqual(exit, { code: 0, signal: null }, server.lines.join("\n"));

      const { summary, permits } = await afterwards(c.orgId);
      assert.deepEqual(
        { balance: summary.balanceKrw, captures: summary.captures, released: summary.releasedHolds, open: summary.openHolds },
        { balance: CREDIT, captures: 0, released: 1, open: 0 },
      );
      if (permits) assert.deepEqual(permits, { org: 0, global: 0 });
    });
  });
}
