// How long a console sign-in takes to answer for an address with an account and for one
// without, through app.request() (no socket), alternating the two so a drift of the
// machine hits both alike. Each request comes from its own client address and names its
// own e-mail address, so no rate limit is met. Prints the median, p90 and max per kind and
// the difference of the medians. The mail a known address gets is written after the
// answer (src/console/mail-queue.ts); its time is in neither column.
//   node --import tsx bench/sign-in-timing.ts [rounds]          (embedded PGlite)
//   DATABASE_URL=… REDIS_URL=… node --import tsx bench/sign-in-timing.ts [rounds]
import { median } from "./median.ts";
import { makeHarness } from "../test/support/harness.ts";
import { createClient, randomIp, uniqueEmail } from "../test/console/client.ts";

const rounds = Number(process.argv[2] ?? 200);
const h = await makeHarness({ env: { TRUST_PROXY: "true" } });
const known: string[] = [];
for (let i = 0; i < rounds; i++) {
  const email = uniqueEmail("known");
  const org = await h.admin("POST", "/orgs", { email });
  if (org.status !== 201) throw new Error(`org: ${JSON.stringify(org.json)}`);
  known.push(email);
}

const times: Record<"known" | "unknown", number[]> = { known: [], unknown: [] };
async function signIn(kind: "known" | "unknown", email: string) {
  const c = createClient(h, randomIp());
  await c.get("/console/sign-in");
  const t0 = performance.now();
  const r = await c.post("/console/sign-in", { email });
  const ms = performance.now() - t0;
  if (r.status !== 200) throw new Error(`sign-in answered ${r.status}`);
  times[kind].push(ms);
  await h.mailSent(); // the queued mail, outside the measured time
}
// Warm-up: the first requests pay for compiling the routes.
for (let i = 0; i < 20; i++) await signIn("unknown", uniqueEmail("warm"));
times.unknown = [];
for (let i = 0; i < rounds; i++) {
  const pair: ["known" | "unknown", string][] = [["known", known[i]!], ["unknown", uniqueEmail("nobody")]];
  if (i % 2) pair.reverse();
  for (const [kind, email] of pair) await signIn(kind, email);
}
await h.close();

const row = (kind: "known" | "unknown") => {
  const s = [...times[kind]].sort((a, b) => a - b);
  return `| ${kind} | ${s.length} | ${median(s).toFixed(2)} | ${s[Math.floor(s.length * 0.9)]!.toFixed(2)} | ${s.at(-1)!.toFixed(2)} |`;
};
console.log(`\nSign-in answer time, ${process.env.DATABASE_URL ? "PostgreSQL" : "embedded PGlite"} (ms)\n`);
console.log("| address | requests | median | p90 | max |\n|---|---:|---:|---:|---:|");
console.log(row("known"));
console.log(row("unknown"));
console.log(`\nmedian(known) - median(unknown) = ${(median(times.known) - median(times.unknown)).toFixed(2)} ms`);
