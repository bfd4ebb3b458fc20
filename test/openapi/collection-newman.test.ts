// The published request collection (docs/pixeldrop.postman_collection.json), run as a
// new user runs it: newman, Postman's own runner, against a real server process on the
// embedded stores (PGlite in a scratch folder, in-process limiter) with only baseUrl
// and operatorToken set and docs/ as the working directory. Every request checks its
// documented status and headers in its own test script; one failed check, a script
// error or a request that got no answer fails this test.
// The server runs the stub engine (a fixed mask, 50 ms): what is under test is the
// collection and the HTTP contract, not the model, and loading the model would add
// tens of seconds (test/product runs the real model).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { COLLECTION_WORKING_DIR } from "../../src/openapi/postman.ts";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import { startServer, stopAll, type ServerProcess } from "../support/server-process.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const COLLECTION = join(ROOT, "docs/pixeldrop.postman_collection.json");

// newman has no type declarations: the part of its run summary read here.
interface Failure {
  error: { name: string; message: string; test?: string };
  source?: { name?: string };
}
interface Summary {
  run: {
    stats: Record<"requests" | "assertions" | "testScripts" | "prerequestScripts", { total: number; failed: number }>;
    failures: Failure[];
    executions: { item: { name: string }; response?: { code: number }; requestError?: Error }[];
  };
}
interface NewmanOptions {
  collection: unknown;
  envVar: { key: string; value: string }[];
  workingDir: string;
  folder?: string;
  reporters: string[];
  timeoutRequest: number;
}
const newman = createRequire(import.meta.url)("newman") as { run(o: NewmanOptions, done: (err: Error | null, s: Summary) => void): void };

const collection = () => JSON.parse(readFileSync(COLLECTION, "utf8")) as { item: { name: string; item: { name: string; event: { script: { exec: string[] } }[] }[] }[] };

function run(server: ServerProcess, c: unknown, folder?: string): Promise<Summary> {
  return new Promise((resolve, reject) =>
    newman.run(
      {
        collection: c,
        // Only the two variables a person sets; everything else the run fills in.
        envVar: [
          { key: "baseUrl", value: server.url },
          { key: "operatorToken", value: OPERATOR_TOKEN },
        ],
        workingDir: join(ROOT, COLLECTION_WORKING_DIR),
        ...(folder ? { folder } : {}),
        reporters: [],
        // The spec's client timeout.
        timeoutRequest: 150_000,
      },
      (err, summary) => (err ? reject(err) : resolve(summary)),
    ),
  );
}

const describeFailures = (s: Summary) =>
  s.run.failures.map((f) => `${f.source?.name ?? "?"}: ${f.error.test ?? f.error.name}: ${f.error.message}`).join("\n");

let server: ServerProcess;
let dataDir: string;

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "pd-collection-"));
  // A fresh service: its own empty database, no DATABASE_URL or REDIS_URL.
  server = await startServer({ DATA_DIR: dataDir }, { timeoutMs: 120_000 });
});

after(async () => {
  await stopAll();
  await rm(dataDir, { recursive: true, force: true });
});

test("the collection runs top to bottom with only baseUrl and operatorToken set, every check passing", async (t) => {
  const requests = collection().item.flatMap((f) => f.item);
  const s = await run(server, collection());
  const { stats } = s.run;
  t.diagnostic(`newman: ${stats.requests.total} requests, ${stats.assertions.total} assertions, ${s.run.failures.length} failures`);
  assert.equal(s.run.failures.length, 0, describeFailures(s));
  assert.equal(stats.requests.total, requests.length, "every request was sent");
  for (const e of s.run.executions) assert.ok(e.response && !e.requestError, `${e.item.name}: no answer (${e.requestError?.message})`);
  // Each request has its own checks (status and request ID at least), and ran them.
  assert.equal(stats.testScripts.total, requests.length);
  assert.equal(stats.testScripts.failed, 0);
  assert.ok(stats.assertions.total >= 3 * requests.length, `only ${stats.assertions.total} assertions`);
});

test("a wrong expected status fails the run (the checks can fail)", async () => {
  const c = collection();
  const health = c.item[0]!.item.find((i) => i.name.startsWith("Liveness"))!;
  const script = health.event[0]!.script;
  assert.ok(script.exec.some((l) => l.includes(".to.eql(200);")), "the liveness request checks for 200");
  script.exec = script.exec.map((l) => l.replace(".to.eql(200);", ".to.eql(201);"));
  const s = await run(server, c, c.item[0]!.name);
  assert.equal(s.run.failures.length, 1, describeFailures(s));
  assert.match(s.run.failures[0]!.error.message, /answered 200/);
  assert.equal(s.run.failures[0]!.error.test, "status 200");
});
