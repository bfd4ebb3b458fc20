// Child process of test/faults/pg-terminate.test.ts: the pg adapter's pool under
// pg_terminate_backend at random moments (and, when asked, server restarts), with
// transactions running all the time. An 'error' event without a listener on a pg
// client is thrown from the socket's callback: it reaches 'uncaughtException' and
// would kill a server. This process counts those instead of dying and prints one JSON
// line: { uncaught, transactions, failed, terminated }.
// Usage: node --import tsx test/support/pg-terminate-stress.ts <databaseUrl> <durationMs>
import pg from "pg";
import { openPostgres } from "../../src/db/postgres-db.ts";

const [url, durationArg] = process.argv.slice(2);
if (!url || !durationArg) throw new Error("usage: pg-terminate-stress.ts <databaseUrl> <durationMs>");
const durationMs = Number(durationArg);
const LOOPS = 20;
const POOL = 10;
// Our own name, so only this process's connections are terminated.
const APP = `pd-stress-${process.pid}`;

let uncaught = 0;
const uncaughtSamples: string[] = [];
process.on("uncaughtException", (err) => {
  uncaught++;
  if (uncaughtSamples.length < 5) uncaughtSamples.push(String((err as Error)?.stack ?? err));
});

const db = openPostgres(url, POOL, { applicationName: APP, onError: () => {} });
const until = Date.now() + durationMs;
let transactions = 0;
let failed = 0;
let terminated = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function loop(): Promise<void> {
  while (Date.now() < until) {
    try {
      await db.transaction(async (tx) => {
        await tx.query("SELECT pg_sleep(0.002)");
        await tx.query("SELECT count(*) FROM pg_class");
      });
      transactions++;
    } catch {
      failed++; // a terminated transaction is rejected: expected, and not what is counted
      await sleep(5);
    }
  }
}

async function killer(): Promise<void> {
  // Its own connection, opened again after a server restart (the long version restarts it).
  let admin: pg.Client | undefined;
  while (Date.now() < until) {
    await sleep(10 + Math.random() * 90);
    try {
      if (!admin) {
        const c = new pg.Client({ connectionString: url, application_name: `${APP}-killer`, connectionTimeoutMillis: 2000 });
        c.on("error", () => {});
        await c.connect();
        admin = c;
      }
      const rows = await admin.query(
        "SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity WHERE application_name = $1 ORDER BY random() LIMIT $2",
        [APP, 1 + Math.floor(Math.random() * 4)],
      );
      terminated += rows.rows.filter((r) => r.t).length;
    } catch {
      await admin?.end().catch(() => {});
      admin = undefined; // the server is restarting: connect again on the next round
    }
  }
  await admin?.end().catch(() => {});
}

await Promise.all([killer(), ...Array.from({ length: LOOPS }, loop)]);
await db.close();
process.stdout.write(`${JSON.stringify({ uncaught, uncaughtSamples, transactions, failed, terminated })}\n`);
