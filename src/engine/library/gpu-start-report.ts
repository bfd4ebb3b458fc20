// What a process that runs the engine says about its GPU when it starts: one line, a
// warning when a GPU is there and goes unused (a host missing the Vulkan loader or
// libglvnd, a container without NVIDIA's graphics capability, the service on Node), and
// the summary an engine's state and /readyz carry. The same diagnosis as `pixeldrop doctor`.
import { diagnoseGpu, summarizeDiagnosis, type DiagnoseOptions, type GpuDiagnosisSummary } from "../inference/gpu-doctor.ts";

export interface GpuStartReport {
  /** Present when a GPU goes unused: log it at warn level. */
  warn?: string;
  /** The one-line summary, for an info line when there is no warning. */
  line: string;
  detail: GpuDiagnosisSummary;
}

/**
 * Diagnoses the host and words it for the start-up log. Pass `adapter` (adapterFacts of
 * the adapter the engine obtained, or null for none) so the adapter is not asked for twice.
 */
export async function gpuStartReport(opts: DiagnoseOptions = {}): Promise<GpuStartReport> {
  return startReportOf(summarizeDiagnosis(await diagnoseGpu(opts)));
}

/** The start-up words for a diagnosis already made (an engine's state carries its summary). */
export function startReportOf(detail: GpuDiagnosisSummary): GpuStartReport {
  const line = `GPU: ${detail.summary}`;
  const problems = detail.problems.join(" ");
  if (detail.verdict === "gpu-unusable") return { warn: `${line}. ${problems}`, line, detail };
  if (detail.verdict === "needs-deno" && detail.gpuPresent) {
    const also = problems ? ` Deno would also need: ${problems}` : "";
    return { warn: `${line}. Start the service on Deno (deno task start, or the image's gpu target) to use it.${also}`, line, detail };
  }
  return { line, detail };
}
