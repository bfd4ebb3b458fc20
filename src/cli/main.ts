// `pixeldrop remove`: removes the backgrounds of files one at a time, with a progress
// bar and a summary, either with the service's pipeline run locally or (with an API
// key) through a running service. Exit code 0 when every file worked, 1 if any failed,
// 2 for a usage error. `assemble`, `doctor` and `reconcile` are commands of their own files.
import { mkdir } from "node:fs/promises";
import { parseRemoveArgs, USAGE, type Env, type RemoveArgs } from "./args.ts";
import { runBatch } from "./batch.ts";
import { expandInputs } from "./inputs.ts";
import { planOutputs } from "./output-names.ts";
import { createProgress } from "./progress.ts";
import type { Remover } from "./remover.ts";

export async function main(
  argv: string[],
  log: (s: string) => void = (s) => console.error(s),
  env: Env = process.env,
  out: (s: string) => void = (s) => console.log(s),
): Promise<number> {
  if (argv[0] === "assemble") return (await import("./assemble-command.ts")).assembleCommand(argv.slice(1), log);
  // Its report is the command's output (stdout), so it can be piped or read as JSON.
  if (argv[0] === "doctor") return (await import("./doctor-command.ts")).doctorCommand(argv.slice(1), out, log);
  if (argv[0] === "reconcile") return (await import("./reconcile-command.ts")).reconcileCommand(argv.slice(1), out, log, env);
  const parsed = parseRemoveArgs(argv, env);
  if (!parsed.ok) {
    if (parsed.message) log(`pixeldrop: ${parsed.message}`);
    log(USAGE);
    return 2;
  }
  const a = parsed.args;
  const { files, missing } = await expandInputs(a.inputs);
  for (const m of missing) log(`pixeldrop: not found: ${m}`);
  if (files.length === 0) {
    log("pixeldrop: no images to process");
    return missing.length ? 1 : 2;
  }

  const made = await createRemover(a, files.length);
  if (!made.ok) {
    log(`pixeldrop: ${made.message}`);
    return 1;
  }
  const remover = made.remover;
  await mkdir(a.outDir, { recursive: true });

  const plan = planOutputs(files, a.outDir);
  const progress = createProgress(plan.length);
  const started = performance.now();
  let report;
  try {
    report = await runBatch(plan, remover, { concurrency: a.concurrency, skipExisting: a.skipExisting, onProgress: (i, label) => progress.update(i, label) });
    progress.finish();
  } finally {
    await remover.close();
  }
  const secs = (performance.now() - started) / 1000;
  const failures = report.failures;
  const done = plan.length - report.skipped.length;
  for (const f of failures) log(`failed: ${f}`);
  if (report.skipped.length) log(`skipped ${report.skipped.length} whose output already exists (--skip-existing)`);
  if (failures.length) log(`${failures.length} failed (listed above)`);
  log(`${report.written} of ${plan.length} images written to ${a.outDir} in ${secs.toFixed(1)} s (${(secs / Math.max(1, done)).toFixed(2)} s each, ${remover.describe()})`);
  return failures.length || missing.length ? 1 : 0;
}

async function createRemover(a: RemoveArgs, files: number): Promise<{ ok: true; remover: Remover } | { ok: false; message: string }> {
  if (a.remote) {
    const { createRemoteRemover } = await import("./remote-remover.ts");
    return { ok: true, remover: createRemoteRemover({ ...a.remote, size: a.size, channels: a.channels, bgColor: a.bgColor }) };
  }
  // Loaded only for local runs: remote mode never starts ONNX Runtime.
  const { createLocalRemover } = await import("./local-remover.ts");
  return createLocalRemover(a, files);
}
