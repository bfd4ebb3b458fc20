// The service's start-up line about the GPU: what the engine found (its state's `gpu`,
// once it has settled), or, for an engine that does not report it, the diagnosis made once
// here. A warning when a GPU is there and goes unused, so a GPU host that
// silently runs on the CPU says so in its first lines.
import { gpuStartReport, startReportOf } from "../engine/library/gpu-start-report.ts";
import type { Engine } from "../engine/pipeline/engine.ts";
import type { Log } from "./logger.ts";

export async function logGpuAtStart(engine: Engine, log: Log): Promise<void> {
  // auto on a Deno host looks at the GPU only when the GPU's start may begin (gpu-handover.ts).
  await engine.settled?.();
  const known = engine.state().gpu;
  const report = known ? startReportOf(known) : await gpuStartReport();
  log({ level: report.warn ? "warn" : "info", msg: report.warn ?? report.line, gpu: report.detail });
}
