// Readers for the deployment files, turning them into plain values the checks can
// compare with src/config.ts and the app's routes: compose.yaml with its ${...}
// references filled from deploy/.env.example, every Kubernetes document, the
// Dockerfile's instructions per stage, and haproxy.cfg's sections.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse, parseAllDocuments } from "yaml";

export const REPO = fileURLToPath(new URL("../../../", import.meta.url));
export const DEPLOY = join(REPO, "deploy");
export const K8S_DIR = join(DEPLOY, "k8s");

export const readText = (path: string): string => readFileSync(path, "utf8");

/** KEY=VALUE lines of an env file (comments and blank lines skipped). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`env file line without '=': ${line}`);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim().replace(/^(["'])(.*)\1$/, "$2");
  }
  return out;
}

export interface Interpolated {
  value: string;
  /** Variables referenced, and whether the reference demands a value (`:?` / `?`). */
  refs: { name: string; required: boolean }[];
}

/**
 * Compose-style interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?message},
 * ${VAR?message}, $VAR and $$ (a literal $). A required variable that is missing throws,
 * as `docker compose` refuses to start.
 */
export function interpolate(text: string, vars: Record<string, string | undefined>): Interpolated {
  const refs: Interpolated["refs"] = [];
  const value = text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (m, name, op, arg, bare) => {
    if (m === "$$") return "$";
    const n = (name ?? bare) as string;
    const v = vars[n];
    const emptyCounts = typeof op === "string" && op.startsWith(":");
    const missing = v === undefined || (emptyCounts && v === "");
    const required = op === ":?" || op === "?";
    refs.push({ name: n, required });
    if (required && missing) throw new Error(`required variable ${n} is not set: ${arg}`);
    if ((op === ":-" || op === "-") && missing) return arg as string;
    return v ?? "";
  });
  return { value, refs };
}

/** Walks a parsed YAML value and interpolates every string in it. */
export function interpolateTree(node: unknown, vars: Record<string, string>, refs: Interpolated["refs"] = []): unknown {
  if (typeof node === "string") {
    const r = interpolate(node, vars);
    refs.push(...r.refs);
    return r.value;
  }
  if (Array.isArray(node)) return node.map((n) => interpolateTree(n, vars, refs));
  if (node && typeof node === "object") {
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, interpolateTree(v, vars, refs)]));
  }
  return node;
}

export type Compose = {
  services: Record<string, ComposeService>;
  [k: string]: unknown;
};
export type ComposeService = Record<string, any>;

/** compose.yaml as written (merge keys resolved, ${...} untouched). */
export function readComposeRaw(path = join(DEPLOY, "compose.yaml")): Compose {
  return parse(readText(path), { merge: true }) as Compose;
}

/** A service's environment as a map, from either the map or the list form. */
export function serviceEnv(svc: ComposeService): Record<string, string> {
  const env = svc.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((line: string) => {
        const eq = line.indexOf("=");
        return eq < 0 ? [line, ""] : [line.slice(0, eq), line.slice(eq + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? "" : String(v)]));
}

/** Compose durations: "170s", "2m50s", "1h", "500ms"; returns seconds. */
export function durationSeconds(text: string): number {
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s|us|ns)/g;
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, ns: 1e-9 };
  let total = 0;
  let consumed = 0;
  for (const m of String(text).matchAll(re)) {
    total += Number(m[1]) * unit[m[2]];
    consumed += m[0].length;
  }
  if (consumed === 0 || consumed !== String(text).length) throw new Error(`not a duration: ${text}`);
  return total;
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  file: string;
  [k: string]: any;
}

/** Every document of every .yaml file directly in `dir` (and, with `recurse`, below). */
export function readK8s(dir = K8S_DIR, recurse = true): K8sObject[] {
  const out: K8sObject[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (recurse) out.push(...readK8s(path, recurse));
      continue;
    }
    if (!/\.ya?ml$/.test(entry.name)) continue;
    for (const doc of parseAllDocuments(readText(path))) {
      if (doc.errors.length) throw new Error(`${path}: ${doc.errors.map((e) => e.message).join("; ")}`);
      const obj = doc.toJS() as K8sObject | null;
      if (obj) out.push({ ...obj, file: path.slice(REPO.length) });
    }
  }
  return out;
}

export interface DockerInstruction {
  op: string;
  args: string;
}

/** Dockerfile instructions grouped by stage (continuation lines joined, comments dropped). */
export function readDockerfile(path = join(REPO, "Dockerfile")): { stages: DockerInstruction[][]; preamble: DockerInstruction[] } {
  const logical: string[] = [];
  let current = "";
  for (const raw of readText(path).split("\n")) {
    if (/^\s*#/.test(raw)) continue;
    const line = raw.replace(/\s+$/, "");
    if (line.endsWith("\\")) {
      current += line.slice(0, -1) + " ";
      continue;
    }
    current += line;
    if (current.trim()) logical.push(current.trim());
    current = "";
  }
  const preamble: DockerInstruction[] = [];
  const stages: DockerInstruction[][] = [];
  for (const line of logical) {
    const sp = line.search(/\s/);
    const ins = { op: line.slice(0, sp).toUpperCase(), args: line.slice(sp + 1).trim() };
    if (ins.op === "FROM") stages.push([ins]);
    else (stages.at(-1) ?? preamble).push(ins);
  }
  return { stages, preamble };
}

/** The name a stage is given by `FROM image AS name`, lower-cased. */
export function stageName(stage: DockerInstruction[]): string | undefined {
  return /\bAS\s+(\S+)\s*$/i.exec(stage[0]!.args)?.[1]?.toLowerCase();
}

/**
 * A stage with what it inherits: `FROM <earlier stage>` brings that stage's instructions
 * (ENV, USER, CMD, ...) first. The default target is the last stage, so
 * `image(stages, stages.length - 1)` is what a plain `docker build .` produces.
 */
export function resolvedStage(stages: DockerInstruction[][], index: number): DockerInstruction[] {
  const stage = stages[index]!;
  const base = stage[0]!.args.split(/\s+/).find((w) => !w.startsWith("--"))!.toLowerCase();
  const parent = stages.findIndex((s, i) => i < index && stageName(s) === base);
  return parent < 0 ? stage : [...resolvedStage(stages, parent), ...stage.slice(1)];
}

/** ENV instructions of a stage as a map (both `ENV A=1 B=2` and `ENV A 1`). */
export function dockerEnv(stage: DockerInstruction[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const ins of stage.filter((i) => i.op === "ENV")) {
    if (!ins.args.includes("=")) {
      const [k, ...rest] = ins.args.split(/\s+/);
      out[k] = rest.join(" ");
      continue;
    }
    for (const m of ins.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) out[m[1]] = m[2].replace(/^"(.*)"$/, "$1");
  }
  return out;
}

export interface HaproxySection {
  kind: string;
  name: string;
  lines: string[];
}

/** haproxy.cfg as sections (global, defaults, frontend x, backend y, resolvers z). */
export function readHaproxy(path = join(DEPLOY, "haproxy.cfg")): HaproxySection[] {
  const sections: HaproxySection[] = [];
  for (const raw of readText(path).split("\n")) {
    const line = raw.replace(/#.*$/, "").trim();
    if (!line) continue;
    if (!/^\s/.test(raw)) {
      const [kind, name = ""] = line.split(/\s+/);
      sections.push({ kind, name, lines: [] });
    } else sections.at(-1)?.lines.push(line);
  }
  return sections;
}
