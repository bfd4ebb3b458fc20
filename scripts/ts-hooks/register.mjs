// `node --import ./scripts/ts-hooks/register.mjs file.ts`: runs our TypeScript without
// tsx (see ./hooks.mjs). The test command starts every test process this way; tsx stays
// the development loop's loader.
import { register } from "node:module";

// Stack traces through the inline source maps point at .ts lines, as under tsx.
process.setSourceMapsEnabled(true);
register("./hooks.mjs", import.meta.url);
