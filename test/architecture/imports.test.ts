// The tables of docs/ARCHITECTURE.md, held to the code: who may import whom, which
// files make up the library side (they never import a service folder), and which
// folder writes which database table. The rules are read from the document itself, so
// the document and this check cannot drift apart; a failure names the file, the
// import (or the table) and the rule it breaks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SRC = join(ROOT, "src");
const DOC = readFileSync(join(ROOT, "docs/ARCHITECTURE.md"), "utf8");

// ---- The source files and their imports ---------------------------------------------

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else if (/\.(ts|tsx|mts|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

/** `src/gateway/removebg.ts` style path. */
const rel = (abs: string) => relative(ROOT, abs).split("\\").join("/");

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

// Static imports and re-exports (with `type` noted), side-effect imports and literal dynamic imports.
const SPECIFIER =
  /(?:^|[\s;])(?:import|export)(\s+type)?\s[^'"]*?from\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm;

function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8").replace(/^\s*\/\/.*$/gm, "");
  const out: Import[] = [];
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[2] ?? m[3] ?? m[4]!;
    if (!spec.startsWith(".")) continue;
    out.push({ from: rel(file), to: rel(normalize(join(dirname(file), spec))), typeOnly: m[1] !== undefined });
  }
  return out;
}

const FILES = sourceFiles(SRC);
const IMPORTS = FILES.flatMap(importsOf);

// ---- The rules, read from docs/ARCHITECTURE.md ----------------------------------------

/** The rows of the markdown table under `heading`: each cell's backticked names. */
function tableUnder(heading: string): string[][][] {
  const start = DOC.indexOf(heading);
  assert.ok(start >= 0, `docs/ARCHITECTURE.md has a section "${heading}"`);
  const rows: string[][][] = [];
  for (const line of DOC.slice(start).split("\n").slice(1)) {
    if (line.startsWith("#")) break;
    if (!line.startsWith("|") || /^\|\s*-/.test(line)) continue;
    const cells = line.split("|").slice(1, -1);
    rows.push(cells.map((c) => [...c.matchAll(/`([^`]+)`(\s*\(types\))?/g)].map((m) => m[1]! + (m[2] ? " (types)" : ""))));
  }
  return rows.filter((r) => r[0]!.length > 0);
}

/** A line's backticked names, for the line that starts with `label`. */
function listAfter(label: string): string[] {
  const line = DOC.split("\n").find((l) => l.startsWith(label));
  assert.ok(line, `docs/ARCHITECTURE.md has a line starting "${label}"`);
  return [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

interface Allowance {
  /** A folder (`billing`), a nested folder (`engine/imaging`) or one file (`contract/tiers.ts`). */
  target: string;
  typeOnly: boolean;
}

const MAY_IMPORT = new Map<string, Allowance[]>(
  tableUnder("## Who may import whom").map(([areas, allowed]) => [
    areas![0]!,
    allowed!.map((a) => ({ target: a.replace(" (types)", ""), typeOnly: a.endsWith(" (types)") })),
  ]),
);

/**
 * The area a file belongs to: the longest area of the table that holds it (a nested
 * area such as `engine/imaging` before its folder), else its folder under src/, or the
 * file itself for src/*.ts. A folder with no row of its own is reported by the first test.
 */
function areaOf(srcRel: string): string {
  const path = srcRel.slice("src/".length);
  let best: string | undefined;
  for (const area of MAY_IMPORT.keys()) {
    if ((path === area || path.startsWith(`${area}/`)) && (best === undefined || area.length > best.length)) best = area;
  }
  return best ?? path.split("/")[0]!;
}

function allowedBy(allowance: Allowance, imp: Import): boolean {
  if (allowance.typeOnly && !imp.typeOnly) return false;
  const target = imp.to.slice("src/".length);
  return target === allowance.target || target.startsWith(`${allowance.target}/`);
}

const glob = (pattern: string) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}(/.*)?$`);

// ---- The checks ----------------------------------------------------------------------

test("the table names every area of src/", () => {
  const areas = new Set(FILES.map((f) => areaOf(rel(f))));
  const missing = [...areas].filter((a) => !MAY_IMPORT.has(a));
  assert.deepEqual(missing, [], "areas of src/ without a row in docs/ARCHITECTURE.md \"Who may import whom\"");
});

test("every import across areas is one the table allows", () => {
  const forbidden: string[] = [];
  for (const imp of IMPORTS) {
    const from = areaOf(imp.from);
    if (from === areaOf(imp.to)) continue;
    const rules = MAY_IMPORT.get(from) ?? [];
    if (!rules.some((r) => allowedBy(r, imp))) {
      const allowed = rules.map((r) => r.target + (r.typeOnly ? " (types)" : "")).join(", ") || "nothing of ours";
      forbidden.push(`${imp.from} imports ${imp.typeOnly ? "types from " : ""}${imp.to}: ${from} may import ${allowed}`);
    }
  }
  assert.deepEqual(forbidden, [], `forbidden imports (docs/ARCHITECTURE.md "Who may import whom"):\n${forbidden.join("\n")}`);
});

test("the library side never imports a service folder", () => {
  const library = listAfter("Library side:").map(glob);
  const service = new Set(listAfter("Service folders:"));
  assert.ok(library.length >= 2 && service.size >= 10, "both lists were read");
  const broken: string[] = [];
  for (const imp of IMPORTS) {
    const file = imp.from.slice("src/".length);
    if (library.some((p) => p.test(file)) && service.has(areaOf(imp.to))) broken.push(`${imp.from} imports ${imp.to}`);
  }
  assert.deepEqual(broken, [], `library files importing service folders (docs/ARCHITECTURE.md "The library side"):\n${broken.join("\n")}`);
});

test("each table is written by the folders the document names", () => {
  const writers = new Map(tableUnder("## Who writes which table").map(([tables, folders]) => [tables![0]!, new Set(folders)]));
  const broken: string[] = [];
  for (const file of FILES) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/\b(?:INSERT INTO|UPDATE|DELETE FROM)\s+([a-z_]+)\b/g)) {
      const table = m[1]!;
      const area = areaOf(rel(file));
      const allowed = writers.get(table);
      if (!allowed?.has(area)) broken.push(`${rel(file)} writes ${table}: ${allowed ? `only ${[...allowed].join(", ")} may` : "the table has no row"}`);
    }
  }
  assert.deepEqual(broken, [], `table writes (docs/ARCHITECTURE.md "Who writes which table"):\n${broken.join("\n")}`);
});
