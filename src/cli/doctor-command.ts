// `pixeldrop doctor [--json]`: whether this machine's GPU can run the engine, and if not,
// what is missing and how to fix it (src/engine/inference/gpu-doctor.ts). Exit 0 when
// nothing is wrong for this runtime (a software adapter, no GPU, or Node, which has no
// WebGPU, are not errors), 1 when a GPU is there but unusable, 2 for a usage error.
import { parseArgs } from "node:util";
import { diagnoseGpu, type GpuDiagnosis } from "../engine/inference/gpu-doctor.ts";
import { messageOf } from "../engine/inference/errors.ts";

export const DOCTOR_USAGE = "usage: pixeldrop doctor [--json]";

/**
 * wgpu's backends for the adapter request when the caller set none: left to all, Deno also
 * starts OpenGL through libEGL, whose exit handler can abort the process (deno.json says
 * the same for the tests and `deno task start`).
 */
const WEBGPU_BACKENDS = "vulkan,metal,dx12";

export async function doctorCommand(
  argv: string[],
  out: (s: string) => void,
  log: (s: string) => void,
  diagnose: () => Promise<GpuDiagnosis> = () => diagnoseGpu(),
): Promise<number> {
  let json: boolean;
  try {
    const { values } = parseArgs({ args: argv, options: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } } });
    if (values.help) {
      out(DOCTOR_USAGE);
      return 0;
    }
    json = values.json ?? false;
  } catch (err) {
    log(`pixeldrop: ${messageOf(err)}`);
    log(DOCTOR_USAGE);
    return 2;
  }
  keepWgpuOffOpenGl();
  const d = await diagnose();
  if (json) out(JSON.stringify({ ...d, runtimeVersion: runtimeVersion() }, null, 2));
  else for (const line of humanLines(d)) out(line);
  return d.verdict === "gpu-unusable" ? 1 : 0;
}

function keepWgpuOffOpenGl(): void {
  if (!(globalThis as { Deno?: unknown }).Deno) return;
  try {
    if (process.env.DENO_WEBGPU_BACKEND === undefined) process.env.DENO_WEBGPU_BACKEND = WEBGPU_BACKENDS;
  } catch {
    // Deno without --allow-env: the adapter is asked for with Deno's default backends.
  }
}

function runtimeVersion(): string {
  const deno = (globalThis as { Deno?: { version?: { deno?: string } } }).Deno?.version?.deno;
  return deno ?? process.versions?.node ?? "";
}

/** The diagnosis as lines a person reads: a verdict first, then each fact on its own line. */
export function humanLines(d: GpuDiagnosis): string[] {
  const lines = [`pixeldrop doctor: ${d.summary}`];
  const row = (label: string, text: string) => lines.push(`  ${label.padEnd(9)}${text}`);
  row("runtime", `${d.runtime} ${runtimeVersion()} (${process.platform} ${process.arch})${d.verdict === "needs-deno" ? ": no WebGPU; WebGPU needs Deno" : ""}`);
  row("devices", d.devices.length ? d.devices.join(", ") : "no GPU device node (/dev/nvidia*, /dev/dri/renderD*)");
  if (d.adapter) {
    const a = d.adapter;
    const ids = [a.vendor && `vendor ${a.vendor}`, a.architecture && `architecture ${a.architecture}`, a.device && `device ${a.device}`].filter(Boolean).join(", ");
    row("adapter", `${a.description || "(no description)"}, ${a.software ? "software (a CPU rasteriser, not a GPU)" : "hardware"}${ids ? ` (${ids})` : ""}`);
  } else if (d.verdict !== "needs-deno") {
    row("adapter", `none offered${d.adapterError ? ` (${d.adapterError})` : ""}`);
  }
  // Under Node the host's problems are what Deno would also need.
  d.problems.forEach((p, i) => row(i > 0 ? "" : d.verdict === "needs-deno" ? "for Deno" : "missing", `${i + 1}. ${p}`));
  for (const n of d.notes) row("note", n);
  lines.push(d.verdict === "gpu-unusable" ? "  verdict  a GPU is present but unusable: fix what is missing above (exit 1)" : "  verdict  nothing is wrong for this runtime (exit 0)");
  return lines;
}
