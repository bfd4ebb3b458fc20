// No crash on a database restart: the pg adapter's transaction() under
// pg_terminate_backend at random moments (a pool of 10, 20 loops of transactions).
// pg-pool drops its idle 'error' listener before `pool.connect()` resolves, so a fatal
// 57P01 arriving with the ready message found no listener and killed the process; the
// adapter now gives every client a listener when it connects (src/db/postgres-db.ts).
// The stress runs in a child process that counts uncaught errors: zero. Short version
// 3 s (npm test); long version 60 s with 5 server restarts (pg_ctl restart -m fast) on
// top (npm run test:faults), as in the run that found the crash. On a private Postgres.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { privateStoresSkip, startPrivateStores } from "../support/private-stores.ts";
import { LONG } from "./load.ts";
import { TS_LOADER } from "../support/ts-loader.ts";

const run = promisify(execFile);
const DURATION_MS = LONG ? 60_000 : 3_000;
const RESTARTS = LONG ? 5 : 0;
const STRESS = fileURLToPath(new URL("../support/pg-terminate-stress.ts", import.meta.url));

test(`backends terminated at random during transactions for ${DURATION_MS / 1000} s (${RESTARTS} restarts): zero uncaught errors`, { skip: privateStoresSkip(), timeout: DURATION_MS + 180_000 }, async () => {
  const stores = await startPrivateStores();
  try {
    const child = run(process.execPath, [...TS_LOADER, STRESS, stores.databaseUrl, String(DURATION_MS)], {
      timeout: DURATION_MS + 60_000,
    });
    for (let i = 0; i < RESTARTS; i++) {
      await new Promise((r) => setTimeout(r, DURATION_MS / (RESTARTS + 1)));
      await stores.restartPostgres();
    }
    const { stdout } = await child;
    const r = JSON.parse(stdout.trim().split("\n").pop()!) as { uncaught: number; uncaughtSamples: string[]; transactions: number; failed: number; terminated: number };
    console.log(`pg-terminate: ${JSON.stringify({ ...r, uncaughtSamples: r.uncaughtSamples.length })}`);
    assert.ok(r.terminated > 0, "backends were terminated");
    assert.ok(r.failed > 0, "some transactions were cut off");
    assert.ok(r.transactions > 0, "transactions ran between the terminations");
    assert.equal(r.uncaught, 0, `uncaught errors:\n${r.uncaughtSamples.join("\n---\n")}`);
  } finally {
    await stores.destroy();
  }
});
