// Runs one test folder on its own, each file in its own process with --expose-gc (the
// fuzz suites measure memory after a full collection), and prints each file's summary
// table. Used by `npm run test:fuzz` and `npm run test:abuse`.
//
//   node test/support/run-suite.mjs test/fuzz            short version (as in CI)
//   node test/support/run-suite.mjs test/fuzz --long     10,000 cases per fuzz target
//   CASES=50000 node test/support/run-suite.mjs test/fuzz
//   node test/support/run-suite.mjs test/abuse --long    also the slow checks (ABUSE_LONG=1)
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const args = process.argv.slice(2);
const long = args.includes("--long");
const dirs = args.filter((a) => !a.startsWith("--"));
if (dirs.length === 0) {
  console.error("usage: node test/support/run-suite.mjs <test folder> [--long]");
  process.exit(2);
}
const env = { ...process.env };
if (long) {
  env.CASES ??= "10000";
  env.ABUSE_LONG ??= "1";
}
let failed = 0;
for (const dir of dirs) {
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith(".test.ts")) continue;
    const file = join(dir, name);
    console.log(`\n# ${file}${long ? " (long)" : ""}`);
    const r = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", "--test-reporter=spec", file], { stdio: "inherit", env });
    if (r.status !== 0) failed++;
  }
}
process.exit(failed === 0 ? 0 : 1);
