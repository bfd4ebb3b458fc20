// `pixeldrop remove`: removes the backgrounds of files one at a time, with a progress
// bar and a summary, either with the service's pipeline run locally or (with an API
// key) through a running service. Exit code 0 when every file worked, 1 if any failed,
// 2 for a usage error.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { parseRemoveArgs, USAGE, type Env, type RemoveArgs } from "./args.ts";
import { expandInputs, outputPath } from "./inputs.ts";
import { createProgress } from "./progress.ts";
import type { Remover } from "./remover.ts";

export async function main(argv: string[], log: (s: string) => void = (s) => console.error(s), env: Env = process.env): Promise<number> {
  if (argv[0] === "assemble") return (await import("./assemble-command.ts")).assembleCommand(argv.slice(1), log);
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

  const made = await createRemover(a);
  if (!made.ok) {
    log(`pixeldrop: ${made.message}`);
    return 1;
  }
  const remover = made.remover;
  await mkdir(a.outDir, { recursive: true });

  const progress = createProgress(files.length);
  const failures: string[] = [];
  const started = performance.now();
  try {
    let stopped: string | undefined;
    for (let i = 0; i < files.length; i++) {
      const file = files[i];
      progress.update(i, file);
      if (stopped) {
        failures.push(`${file}: not sent (${stopped})`);
        continue;
      }
      try {
        const result = await remover.remove(new Uint8Array(await readFile(file)));
        if (result.ok) await writeFile(outputPath(a.outDir, file), result.png);
        else {
          failures.push(`${file}: ${result.message}`);
          if (result.stop) stopped = result.message.split(":")[0];
        }
      } catch (err) {
        failures.push(`${file}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    progress.update(files.length, "done");
    progress.finish();
  } finally {
    await remover.close();
  }
  const secs = (performance.now() - started) / 1000;
  const ok = files.length - failures.length;
  for (const f of failures) log(`failed: ${f}`);
  log(`${ok} of ${files.length} images written to ${a.outDir} in ${secs.toFixed(1)} s (${(secs / files.length).toFixed(2)} s each, ${remover.describe()})`);
  return failures.length || missing.length ? 1 : 0;
}

async function createRemover(a: RemoveArgs): Promise<{ ok: true; remover: Remover } | { ok: false; message: string }> {
  if (a.remote) {
    const { createRemoteRemover } = await import("./remote-remover.ts");
    return { ok: true, remover: createRemoteRemover({ ...a.remote, size: a.size }) };
  }
  // Loaded only for local runs: remote mode never starts ONNX Runtime.
  const { createLocalRemover } = await import("./local-remover.ts");
  return createLocalRemover(a);
}
