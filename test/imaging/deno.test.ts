import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

// Deno is not a project dependency: this runs where a `deno` binary is on PATH (or
// named by DENO_BIN) and skips elsewhere, e.g. in CI.
const deno = process.env.DENO_BIN ?? "deno";
const hasDeno = spawnSync(deno, ["--version"], { stdio: "ignore" }).status === 0;

test("the imaging module decodes and encodes under Deno (read permission only)", { skip: !hasDeno && "no deno binary" }, () => {
  const script = fileURLToPath(new URL("./deno-smoke.ts", import.meta.url));
  const run = spawnSync(deno, ["run", "--allow-read", "--no-prompt", script], { encoding: "utf8", timeout: 120_000 });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout.trim().split("\n").pop()!), {
    "jpeg-baseline.jpg": "240x160",
    "jpeg-cmyk-adobe.jpg": "240x160",
    "png-palette-trns.png": "240x160",
    "webp-alpha.webp": "240x160",
    "png-rgba-truncated.png": "failure",
    encoded: "2x1",
  });
});
