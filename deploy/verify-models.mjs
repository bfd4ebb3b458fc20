// Build-time check for the container image: every model in models/manifest.json is
// present with the manifest's size and sha256. scripts/assemble-models.mjs (src/engine/assets/assemble.ts) already checks
// while it assembles (npm ci's prepare step), but it repairs what it finds wrong; this
// script only reads and fails, so a build can never ship a model nobody verified.
//
// Usage: node deploy/verify-models.mjs [project dir] [model name...]
//   project dir: default the current directory; model names: default every manifest entry
//   (the image checks the ones it ships, MODELS in the Dockerfile).
// Exit code 0 when every model matches, 1 otherwise (each problem on stderr).
import { createHash } from "node:crypto";
import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(process.argv[2] ?? ".");
const only = process.argv.slice(3).flatMap((a) => a.split(",")).filter(Boolean);
const modelsDir = join(root, "models");

function sha256Of(path) {
  return new Promise((done, failed) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", failed)
      .on("end", () => done(hash.digest("hex")));
  });
}

const manifest = JSON.parse(readFileSync(join(modelsDir, "manifest.json"), "utf8"));
const entries = Object.entries(manifest.models ?? {}).filter(([name]) => only.length === 0 || only.includes(name));
const problems = [];
if (entries.length === 0) problems.push("models/manifest.json lists no models");
for (const name of only) if (!Object.hasOwn(manifest.models ?? {}, name)) problems.push(`${name}: not in models/manifest.json`);
for (const [name, entry] of entries) {
  const path = join(modelsDir, entry.file);
  if (!existsSync(path)) {
    problems.push(`${name}: ${entry.file} is missing`);
    continue;
  }
  const bytes = statSync(path).size;
  if (bytes !== entry.bytes) {
    problems.push(`${name}: ${entry.file} is ${bytes} bytes, manifest says ${entry.bytes}`);
    continue;
  }
  const got = await sha256Of(path);
  if (got !== entry.sha256) problems.push(`${name}: ${entry.file} sha256 ${got}, manifest says ${entry.sha256}`);
  else console.log(`verify-models: ${entry.file} ok (${bytes} bytes, sha256 ${got.slice(0, 12)}…)`);
}
for (const p of problems) console.error(`verify-models: ${p}`);
process.exit(problems.length ? 1 : 0);
