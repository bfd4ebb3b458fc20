// The stdout logger writes asynchronously (src/wiring/logger.ts): lines still waiting
// when the process ends must come out anyway, however it ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { TS_LOADER } from "../support/ts-loader.ts";

const FIXTURE = fileURLToPath(new URL("./fixtures/log-then-exit.ts", import.meta.url));
const LINES = 20_000;

for (const how of ["exit", "throw", "end"] as const) {
  test(`every line logged reaches stdout when the process ends by ${how}`, () => {
    const run = spawnSync(process.execPath, [...TS_LOADER, FIXTURE, how], {
      env: { ...process.env, LINES: String(LINES) },
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    const lines = run.stdout.split("\n").filter((l) => l !== "");
    assert.equal(lines.length, LINES, `got ${lines.length} lines; stderr: ${run.stderr.slice(0, 500)}`);
    // In order and whole: the last one is the last logged.
    assert.equal((JSON.parse(lines.at(-1)!) as { i: number }).i, LINES - 1);
    assert.equal(run.status, how === "exit" ? 3 : how === "throw" ? 1 : 0);
  });
}
