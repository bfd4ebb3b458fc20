#!/usr/bin/env node
// The `pixeldrop` command. From the repository it runs the TypeScript sources through
// tsx's loader; from an installed package (no src/ in it) it runs the built dist/.
// Deno runs the .ts entry directly: deno run -A src/cli/main.ts.
import { existsSync } from "node:fs";

const source = new URL("../src/cli/main.ts", import.meta.url);
let main;
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import(source.href));
} else {
  ({ main } = await import("../dist/cli/main.js"));
}
process.exitCode = await main(process.argv.slice(2));
