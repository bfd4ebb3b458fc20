// A figure (a number with its unit: "116.5 ms", "978–995 MiB") is stated in one doc; the
// others name that doc. Then a figure that changes is changed once, and no doc goes on
// saying last month's number. Round settings are not figures (scripts/doc-figures.ts);
// the few facts every reader needs where they read are listed below with why.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { figuresIn } from "../../scripts/doc-figures.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Facts, not measurements: true by arithmetic or by definition wherever they are quoted. */
const FACTS = new Map<string, string>([
  ["48 MB", "a 12 MP picture as RGBA is 48 MB, by arithmetic"],
  ["12 MB", "the upload cap of the interface spec, a setting quoted where it applies"],
  ["15 s", "settings: the hold sweeper's interval, the fault runs' outage length"],
]);

/**
 * Two different measurements that happen to share a value, each stated in the one doc that owns
 * it. Listed with the exact docs: a third doc stating the figure, or either moving, fails again.
 */
const COINCIDENCES = new Map<string, { docs: string[]; why: string }>([
  ["31.0 s", { docs: ["docs/MODEL.md", "docs/RELIABILITY.md"], why: "int8-static's first run on WebGPU; a test caller's Retry-After at the cap" }],
  ["39 MiB", { docs: ["docs/DEPLOY.md", "docs/MODEL.md"], why: "the GPU image's /data folder; a bare node process's peak RSS" }],
]);

function isCoincidence(key: string, files: Map<string, number[]>): boolean {
  const known = COINCIDENCES.get(key);
  return known !== undefined && [...files.keys()].sort().join() === [...known.docs].sort().join();
}

function docs(): string[] {
  const inDocs = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`);
  return ["README.md", ...inDocs];
}

test("no figure is stated in two docs", () => {
  const where = new Map<string, Map<string, number[]>>();
  for (const file of docs()) {
    for (const figure of figuresIn(readFileSync(join(ROOT, file), "utf8"))) {
      if (FACTS.has(figure.key)) continue;
      const files = where.get(figure.key) ?? new Map<string, number[]>();
      files.set(file, [...(files.get(file) ?? []), figure.line]);
      where.set(figure.key, files);
    }
  }
  const repeated = [...where]
    .filter(([key, files]) => files.size > 1 && !isCoincidence(key, files))
    .map(([key, files]) => `${key}: ${[...files].map(([f, lines]) => `${f}:${lines.join(",")}`).join(", ")}`);
  assert.deepEqual(repeated, [], `state each figure in one doc and name that doc elsewhere:\n${repeated.join("\n")}`);
});

test("the figure reader finds measurements and passes over settings", () => {
  const keys = (text: string) => figuresIn(text).map((f) => f.key);
  assert.deepEqual(keys("inference 116.5 ms, peak 978–995 MiB, ratio 0.74 ×, 2,793 ms"), ["116.5 ms", "978–995 MiB", "0.74 ×", "2,793 ms"]);
  assert.deepEqual(keys("a 30 s timeout, 500 ms, 20 MB, 32 KiB, 4242 × 2828 pixels, 12 MP"), []);
  assert.deepEqual(keys("```\nnpm run bench -- --runs 5 # 116.5 ms\n```"), []);
  assert.deepEqual(keys("refused (429s; 503s when busy), 429 s later"), ["429 s"]);
});
