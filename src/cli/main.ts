// `pixeldrop remove`: the service's pipeline run locally on files, one at a time, with
// a progress bar and a summary. Exit code 0 when every file worked, 1 if any failed,
// 2 for a usage error.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { resolveModel } from "../inference/manifest.ts";
import { createMaskSession } from "../inference/session.ts";
import { runPipeline } from "../product/pipeline.ts";
import { PACKAGE_MODELS_DIR, PACKAGE_WASM_DIR } from "../wiring/paths.ts";
import { parseRemoveArgs, USAGE } from "./args.ts";
import { expandInputs, outputPath } from "./inputs.ts";
import { createProgress } from "./progress.ts";

export async function main(argv: string[], log: (s: string) => void = (s) => console.error(s)): Promise<number> {
  const parsed = parseRemoveArgs(argv);
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

  const model = await resolveModel({ model: a.model, modelsDir: PACKAGE_MODELS_DIR });
  if (!model.ok) {
    log(`pixeldrop: ${model.title}`);
    return 1;
  }
  const session = await createMaskSession({
    model: model.entry,
    modelPath: model.path,
    backend: a.backend,
    threads: a.threads ?? availableParallelism(),
    wasmDir: PACKAGE_WASM_DIR,
  });
  await mkdir(a.outDir, { recursive: true });

  const progress = createProgress(files.length);
  const failures: string[] = [];
  const started = performance.now();
  try {
    for (let i = 0; i < files.length; i++) {
      const file = files[i];
      progress.update(i, file);
      try {
        const result = await runPipeline({ image: new Uint8Array(await readFile(file)), size: a.size, semitransparency: true }, session);
        if (!result.ok) failures.push(`${file}: ${result.title}`);
        else await writeFile(outputPath(a.outDir, file), result.png);
      } catch (err) {
        failures.push(`${file}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    progress.update(files.length, "done");
    progress.finish();
  } finally {
    await session.dispose();
  }
  const secs = (performance.now() - started) / 1000;
  const ok = files.length - failures.length;
  for (const f of failures) log(`failed: ${f}`);
  log(`${ok} of ${files.length} images written to ${a.outDir} in ${secs.toFixed(1)} s (${(secs / files.length).toFixed(2)} s each, backend ${session.backend})`);
  return failures.length || missing.length ? 1 : 0;
}
