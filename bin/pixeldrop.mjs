#!/usr/bin/env node
// The `pixeldrop` command. Our sources are TypeScript: register tsx's loader, then run
// the CLI entry (Deno runs the .ts entry directly: deno run -A src/cli/main.ts).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
