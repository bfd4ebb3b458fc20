#!/usr/bin/env node
// The `pixeldrop` command: runs the JavaScript built from src/ into dist/, installed or
// in a checkout alike (no TypeScript loader at run time). In a checkout, a dist/ older
// than src/ stops here with a message (src/require-fresh-dist.mjs); `npm run build`
// makes it fresh. Deno runs the sources directly: deno run -A src/cli/main.ts.
import { existsSync } from "node:fs";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(entry)) {
  console.error("pixeldrop: dist/ is not built. Run `npm run build` in the package folder.");
  process.exit(1);
}
await import("../dist/require-fresh-dist.mjs");
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
