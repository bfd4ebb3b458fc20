// The service's start-up line about the GPU: what the engine found (its state's `gpu`),
// or, for an engine that does not report it, the diagnosis made once here after the
// engine settles. A warning when a GPU is there and goes unused, so a GPU host that
// silently runs on the CPU says so in its first lines.
import { gpuStartReport, startReportOf } from "../engine/library/gpu-start-report.ts";
import type { Engine } from "../engine/pipeline/engine.ts";
import type { Log } from "./logger.ts";

export async function logGpuAtStart(engine: Engine, log: Log): Promise<void> {
  const known = engine.state().gpu;
  const report = known ? startReportOf(known) : await gpuStartReport();
  log({ level: report.warn ? "warn" : "info", msg: report.warn ?? report.line, gpu: report.detail });
}
