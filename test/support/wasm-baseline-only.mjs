// Preloaded (NODE_OPTIONS=--import=…) into the test processes that never run the real
// model, and the processes they start: their WebAssembly stays on V8's baseline compiler
// (Liftoff) instead of tiering hot functions up to the optimising one (TurboFan).
// WebAssembly there is PGlite's Postgres, the image codecs and the tiny test models, in
// processes that live seconds: optimising Postgres's hot functions cost more CPU than it
// saved (three PGlite-heavy files: 11.4 → 8.6 CPU-s), and across the suite TurboFan on
// WebAssembly was 11 % of all CPU (perf, docs/BENCHMARKS.md). The same code runs either
// way; only how fast its machine code is differs. Files that run the real model keep the
// optimising tier (scripts/test-plan.mjs, REAL_MODEL): IS-Net on baseline code is several
// times slower.
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--liftoff-only");
