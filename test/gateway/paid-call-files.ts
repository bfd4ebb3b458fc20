// Counts the files of src/ one paid call runs code in (docs/ARCHITECTURE.md, "The path
// of one paid request"), with V8's own coverage: the default one-process deployment as
// the gateway tests build it (inline stub engine, embedded stores), one paid call to
// warm the process, then the coverage counters reset and the second call counted. Not
// a test; run it as
//   NODE_V8_COVERAGE=$(mktemp -d) node --import tsx test/gateway/paid-call-files.ts
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { takeCoverage } from "node:v8";
import { fileURLToPath } from "node:url";
import { gatewayHarness, TINY_PNG } from "./helpers.ts";

const dir = process.env.NODE_V8_COVERAGE;
if (!dir) throw new Error("set NODE_V8_COVERAGE to an empty folder");
const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

interface ScriptCoverage {
  url: string;
  functions: { functionName: string; ranges: { count: number }[] }[];
}

async function coveredFiles(): Promise<Set<string>> {
  const files = (await readdir(dir!)).filter((f) => f.endsWith(".json"));
  const out = new Set<string>();
  for (const f of files) {
    const { result } = JSON.parse(await readFile(join(dir!, f), "utf8")) as { result: ScriptCoverage[] };
    for (const s of result) {
      if (!s.url.startsWith("file://")) continue;
      const path = fileURLToPath(s.url);
      // A function's first range is its whole body: a count above 0 means it ran.
      if (path.startsWith(SRC) && s.functions.some((fn) => (fn.ranges[0]?.count ?? 0) > 0)) out.add(path.slice(SRC.length));
    }
  }
  return out;
}

const g = await gatewayHarness();
const c = await g.h.customer({ creditKrw: 100_000 });
const call = async () => {
  const res = await g.removebg(c.liveKey, { image_file: TINY_PNG, size: "preview" });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`paid call answered ${res.status}`);
  // Let the call's own follow-ups (the grouped log write) finish inside the window.
  await new Promise((r) => setTimeout(r, 300));
};
await call();
takeCoverage(); // writes what ran so far and resets the counters
for (const f of await readdir(dir)) await import("node:fs/promises").then((fs) => fs.rm(join(dir, f)));
await call();
takeCoverage();
const files = [...(await coveredFiles())].sort();
const byArea = new Map<string, number>();
for (const f of files) {
  const area = f.includes("/") ? f.slice(0, f.indexOf("/")) : f;
  byArea.set(area, (byArea.get(area) ?? 0) + 1);
}
console.log(`${files.length} files of src/ ran code during the second paid call:`);
console.log([...byArea.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([a, n]) => `${n} ${a}`).join(", "));
console.log(files.join("\n"));
await g.close();
process.exit(0);
