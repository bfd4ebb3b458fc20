// The node arguments that let a child process run our TypeScript: the test command's own
// loader (scripts/ts-hooks/), which serves the JavaScript it compiled before the jobs
// started, so a child does not load tsx and esbuild again.
export const TS_LOADER = ["--import", new URL("../../scripts/ts-hooks/register.mjs", import.meta.url).href];
