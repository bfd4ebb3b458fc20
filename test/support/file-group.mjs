// Runs several test files in one Node process, one after the other, each file's tests and
// hooks inside a suite named after the file:
//   node --import scripts/ts-hooks/register.mjs --test-reporter=spec test/support/file-group.mjs a.test.ts b.test.ts
// The test command groups the files that run the real model on WebAssembly this way
// (scripts/test-plan.mjs): V8 keeps a process's compiled WebAssembly, and its optimised
// code, for every later session of the same runtime, worker threads included, so the
// slow first inference (baseline code until the optimising tier catches up) is paid once
// per group instead of once per file.
// A file's top-level before/after hooks belong to its suite, so they run around that file's
// tests only (one file's sessions are released before the next file creates its own), and
// a failure is reported under the file's name.
import { describe } from "node:test";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const files = process.argv.slice(2);
if (files.length === 0) throw new Error("file-group.mjs: name the test files to run");
for (const file of files) describe(file, () => import(pathToFileURL(resolve(file)).href));
