// vitest runs only the library's vitest suite (test/vitest/*.spec.ts); everything else in
// test/ belongs to Node's runner (scripts/run-tests.mjs runs both, vitest twice: the default
// pool and --pool=threads, since our worker threads then live inside vitest's own workers).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/vitest/**/*.spec.ts"],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // A remover left undisposed must not hold a vitest worker open: fail rather than wait.
    teardownTimeout: 20_000,
  },
});
