// Why a GPU host runs on the CPU: the GPU device nodes the machine shows, the WebGPU
// adapter the runtime offers, and, when a GPU is there but no hardware adapter is, what is
// missing (the Vulkan loader, libglvnd, the driver's ICD file, a container started without
// NVIDIA's graphics capability) and how to fix it. One sentence per problem, so a start-up
// warn line, /readyz and `pixeldrop doctor` say the same thing.
//
// Cheap where there is no GPU: the host's files are read only when a GPU device node
// exists, and the adapter is asked for only on a runtime that has WebGPU (Deno), where the
// engine asks anyway; a caller that already holds the adapter's facts passes them. Never
// throws.
import { messageOf } from "./errors.ts";
import {
  findLibrary,
  gpuDevices,
  libraryDirs,
  loaderIcdPaths,
  readIcds,
  realHost,
  UNSEARCHED_ICD_DIRS,
  UNSEARCHED_LIBRARY_DIRS,
  type GpuDevice,
  type HostView,
  type VulkanIcd,
} from "./gpu-host.ts";

export type JsRuntime = "deno" | "node" | "bun" | "other";

/** What a WebGPU adapter says of itself (GPUAdapterInfo), and whether it is a software rasteriser. */
export interface GpuAdapterFacts {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  software: boolean;
  /** The WebGPU features it offers (`shader-f16`: auto's float16 GPU form, src/engine/inference/gpu-form.ts). */
  features: string[];
}

/**
 * gpu: a hardware adapter. software-only: no GPU device, a software adapter (Mesa's
 * lavapipe). no-gpu: neither. gpu-unusable: a GPU device but no hardware adapter, the one
 * case that is an error. needs-deno: a runtime without WebGPU (Node).
 */
export type GpuVerdict = "gpu" | "software-only" | "no-gpu" | "gpu-unusable" | "needs-deno";

export interface GpuDiagnosis {
  runtime: JsRuntime;
  /** The GPU device nodes seen (/dev/nvidia*, /dev/dri/renderD*). */
  devices: string[];
  /** Whether one of them is a GPU's own (not only control nodes, not a VM's display adapter). */
  gpuPresent: boolean;
  adapter?: GpuAdapterFacts;
  /** The adapter request's own error, when it threw. */
  adapterError?: string;
  verdict: GpuVerdict;
  /** Each one sentence: what is missing and how to fix it. */
  problems: string[];
  /** What is fine but worth saying (a software adapter is not an error, ...). */
  notes: string[];
  /** One line. */
  summary: string;
}

/** The part an engine's state and /readyz carry. */
export interface GpuDiagnosisSummary {
  verdict: GpuVerdict;
  summary: string;
  /** The adapter's description, when there is one. */
  adapter?: string;
  software?: boolean;
  gpuPresent: boolean;
  problems: string[];
}

export interface DiagnoseOptions {
  /** The adapter the caller already asked for (null: none was offered); absent: asked here where WebGPU exists. */
  adapter?: GpuAdapterFacts | null;
  /** The host's files and environment (tests pass a made-up one). */
  host?: HostView;
  runtime?: JsRuntime;
  /** How to ask for the adapter (tests); implies a runtime with WebGPU. */
  requestAdapter?: () => Promise<{ adapter: GpuAdapterFacts | null; error?: string }>;
}

/** The diagnosis of this process's host; never throws. */
export async function diagnoseGpu(opts: DiagnoseOptions = {}): Promise<GpuDiagnosis> {
  const runtime = opts.runtime ?? currentRuntime();
  try {
    return await diagnose(opts, runtime);
  } catch (err) {
    const why = `the GPU check itself failed: ${messageOf(err)}`;
    return { runtime, devices: [], gpuPresent: false, verdict: "no-gpu", problems: [], notes: [why], summary: why };
  }
}

export function currentRuntime(): JsRuntime {
  const g = globalThis as { Deno?: { version?: { deno?: string } }; Bun?: unknown };
  if (typeof g.Deno?.version?.deno === "string") return "deno";
  if (g.Bun !== undefined) return "bun";
  return typeof process !== "undefined" && process.versions?.node ? "node" : "other";
}

async function diagnose(opts: DiagnoseOptions, runtime: JsRuntime): Promise<GpuDiagnosis> {
  const host = opts.host ?? realHost();
  const devices = host.platform === "linux" ? gpuDevices(host) : [];
  const gpus = devices.filter((d) => d.gpu);
  const webgpu = opts.adapter !== undefined || opts.requestAdapter !== undefined || navigatorGpu() !== undefined;
  let adapter: GpuAdapterFacts | undefined;
  let adapterError: string | undefined;
  if (opts.adapter !== undefined) adapter = opts.adapter ?? undefined;
  else if (webgpu) {
    const asked = await (opts.requestAdapter ?? requestAdapterFacts)();
    adapter = asked.adapter ?? undefined;
    adapterError = asked.error;
  }

  const verdict: GpuVerdict = !webgpu
    ? "needs-deno"
    : adapter && !adapter.software
      ? "gpu"
      : gpus.length
        ? "gpu-unusable"
        : adapter
          ? "software-only"
          : "no-gpu";
  // The host's files are read only when a GPU is there and not in use.
  const problems = gpus.length && verdict !== "gpu" ? hostProblems(host, gpus) : [];
  if (verdict === "gpu-unusable" && problems.length === 0) problems.push(unexplained(gpus, adapter, adapterError));
  const d = { runtime, devices: devices.map((x) => x.path), gpuPresent: gpus.length > 0, ...(adapter ? { adapter } : {}), ...(adapterError ? { adapterError } : {}), verdict, problems };
  return { ...d, notes: notesFor(d), summary: summaryOf(d, gpus) };
}

/** What the host lacks for the GPUs it shows; each entry one sentence with its fix. */
function hostProblems(host: HostView, gpus: GpuDevice[]): string[] {
  const problems: string[] = [];
  const dirs = libraryDirs(host);
  const backends = host.env("DENO_WEBGPU_BACKEND");
  if (backends && !/\b(vulkan|vk|primary)\b/i.test(backends)) {
    problems.push(`DENO_WEBGPU_BACKEND=${backends} leaves out Vulkan, the backend through which wgpu drives a GPU on Linux: set DENO_WEBGPU_BACKEND=vulkan.`);
  }
  const closed = [...gpus.map((g) => g.path), ...(gpus.some((g) => g.kind === "nvidia") ? ["/dev/nvidiactl"] : [])].filter((p) => host.canOpen(p) === "no");
  if (closed.length) {
    problems.push(`This process cannot open ${closed.join(", ")} for reading and writing: run it as a user of the nodes' group (ls -l shows it; often video or render), or give the container the devices.`);
  }
  if (!findLibrary(host, "libvulkan.so.1", dirs)) {
    problems.push("The Vulkan loader (libvulkan.so.1) is missing: install it (Debian, Ubuntu: apt-get install libvulkan1; Fedora, RHEL: dnf install vulkan-loader).");
  }
  const { files, fromEnv } = loaderIcdPaths(host);
  const icds = readIcds(host, files, dirs);
  if (gpus.some((g) => g.kind === "nvidia")) problems.push(...nvidiaProblems(host, dirs, icds, fromEnv));
  else if (!icds.some((i) => i.vendor !== "software" && i.libraryFound)) {
    problems.push(
      `No Vulkan driver for the GPU at ${gpus.map((g) => g.path).join(", ")}${fromEnv ? ` among the ICD files ${fromEnv} names` : ""}: install Mesa's (Debian, Ubuntu: apt-get install mesa-vulkan-drivers) or the GPU vendor's.`,
    );
  }
  return problems;
}

/** The NVIDIA Vulkan driver's file, the ICD naming it: libGLX_nvidia.so.0 since driver 390. */
const NVIDIA_VULKAN_LIBRARY = "libGLX_nvidia.so.0";

function nvidiaProblems(host: HostView, dirs: string[], icds: VulkanIcd[], fromEnv: string | undefined): string[] {
  const problems: string[] = [];
  const nvidiaIcds = icds.filter((i) => i.vendor === "nvidia");
  const usable = nvidiaIcds.find((i) => i.libraryFound);
  const glx = findLibrary(host, NVIDIA_VULKAN_LIBRARY, dirs);
  const driverMissing = !usable || !glx;

  // A container whose NVIDIA runtime was not asked for the graphics capability gets the
  // driver's compute libraries but neither its Vulkan library nor its ICD file.
  const visible = host.env("NVIDIA_VISIBLE_DEVICES");
  const caps = host.env("NVIDIA_DRIVER_CAPABILITIES");
  const toolkit = visible !== undefined && visible !== "" && visible !== "void" && visible !== "none";
  const lacksGraphics = toolkit && !/\b(graphics|all)\b/.test(caps ?? "");
  const computeOnly = !!(findLibrary(host, "libcuda.so.1", dirs) || findLibrary(host, "libnvidia-ml.so.1", dirs));
  const container = toolkit || host.isFile("/.dockerenv") || host.isFile("/run/.containerenv") || !!host.env("KUBERNETES_SERVICE_HOST");
  let capability = false;
  if (driverMissing && lacksGraphics) {
    capability = true;
    problems.push(
      `The container was started without NVIDIA's graphics driver capability (NVIDIA_DRIVER_CAPABILITIES=${caps ?? "unset, which means utility,compute"}), so its Vulkan driver (${NVIDIA_VULKAN_LIBRARY}, nvidia_icd.json) was not mounted: start it with NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics (or all).`,
    );
  } else if (driverMissing && !glx && container && computeOnly) {
    capability = true;
    problems.push(
      `This container has the NVIDIA driver's compute libraries but not its Vulkan driver (${NVIDIA_VULKAN_LIBRARY}, nvidia_icd.json): it was started without the graphics driver capability; start it with NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics (or all).`,
    );
  }

  if (!capability) {
    if (nvidiaIcds.length === 0) {
      const elsewhere = UNSEARCHED_ICD_DIRS.flatMap((d) => readIcds(host, (host.list(d) ?? []).filter((n) => n.endsWith(".json")).map((n) => `${d}/${n}`), dirs)).find(
        (i) => i.vendor === "nvidia",
      );
      if (elsewhere) {
        problems.push(`NVIDIA's Vulkan ICD file ${elsewhere.file} is in a folder the Vulkan loader does not search${fromEnv ? ` and ${fromEnv} does not name it` : ""}: set VK_DRIVER_FILES=${elsewhere.file}.`);
      } else if (fromEnv) {
        problems.push(`${fromEnv} names no NVIDIA ICD file, and it replaces the Vulkan loader's own search: add NVIDIA's nvidia_icd.json to it, or unset it.`);
      } else {
        problems.push(
          `No NVIDIA Vulkan ICD file (nvidia_icd.json) in /usr/share/vulkan/icd.d or /etc/vulkan/icd.d: install the NVIDIA driver's Vulkan part (the .run installer has it; Debian: nvidia-vulkan-icd), at the kernel driver's version.`,
        );
      }
    }
    for (const icd of nvidiaIcds.filter((i) => i.library !== undefined && !i.libraryFound)) {
      const off = UNSEARCHED_LIBRARY_DIRS.find((d) => host.isFile(`${d}/${icd.library}`));
      problems.push(
        off
          ? `${icd.file} names ${icd.library}, which is in ${off}, off the dynamic linker's path: add ${off} to LD_LIBRARY_PATH (or to /etc/ld.so.conf.d and run ldconfig).`
          : `${icd.file} names ${icd.library}, which the dynamic linker does not find: install the NVIDIA driver's GL and Vulkan libraries at the kernel driver's version.`,
      );
    }
  }

  // NVIDIA's Vulkan driver is a libglvnd vendor library: without libGLdispatch.so.0 it does
  // not load, and Deno offers no adapter at all.
  const driverLibrary = usable?.library ?? NVIDIA_VULKAN_LIBRARY;
  if (/libGLX_nvidia/.test(driverLibrary) && !findLibrary(host, "libGLdispatch.so.0", dirs)) {
    problems.push(
      `libglvnd's libGLdispatch.so.0, which NVIDIA's Vulkan driver (${NVIDIA_VULKAN_LIBRARY}) needs, is missing: install libglvnd (Debian, Ubuntu: apt-get install libglvnd0 libegl1 libgl1 libglx0 libopengl0 libgles2).`,
    );
  }
  return problems;
}

function unexplained(gpus: GpuDevice[], adapter: GpuAdapterFacts | undefined, error: string | undefined): string {
  const offered = adapter ? `only the software adapter ${adapter.description}` : "no WebGPU adapter";
  return (
    `Deno offered ${offered}${error ? ` (${error})` : ""} although ${gpus.map((g) => g.path).join(", ")} exist${gpus.length === 1 ? "s" : ""}, and the Vulkan loader, ` +
    "the driver's ICD file and its libraries look present: run vulkaninfo --summary (apt-get install vulkan-tools) for the driver's own error, and check that the driver's libraries match the kernel module's version (nvidia-smi)."
  );
}

type Found = Pick<GpuDiagnosis, "runtime" | "devices" | "adapter" | "verdict" | "problems">;

function notesFor(d: Found): string[] {
  switch (d.verdict) {
    case "gpu":
      return ["auto runs the default model's GPU form on it."];
    case "software-only":
      return [`${d.adapter!.description} is a software rasteriser, not a GPU: auto runs on WebAssembly, which is faster there. Not an error.`];
    case "no-gpu":
      return ["The engine runs on WebAssembly. Not an error."];
    case "needs-deno":
      return [
        `WebGPU needs Deno (${d.runtime} has no navigator.gpu): the engine runs on WebAssembly here. Not an error; for the GPU run the service with \`deno task start\` or the image's gpu target, or the CLI with \`deno run -A bin/pixeldrop.mjs\`.`,
      ];
    case "gpu-unusable":
      return ["The engine runs on WebAssembly until the problems are fixed."];
  }
}

function summaryOf(d: Found, gpus: GpuDevice[]): string {
  const where = gpus.map((g) => g.path).join(", ");
  const n = d.problems.length;
  const count = `${n} problem${n === 1 ? "" : "s"}`;
  switch (d.verdict) {
    case "gpu":
      return `WebGPU on ${d.adapter!.description || d.adapter!.vendor} (hardware adapter)`;
    case "software-only":
      return `only a software WebGPU adapter (${d.adapter!.description}) and no GPU device: the engine runs on WebAssembly`;
    case "no-gpu":
      return "no GPU device and no WebGPU adapter: the engine runs on WebAssembly";
    case "needs-deno":
      return `WebGPU needs Deno (this is ${d.runtime})${gpus.length ? `; GPU present (${where}), unused${n ? `, ${count} for Deno` : ""}` : "; no GPU device"}`;
    case "gpu-unusable":
      return `GPU present (${where}) but ${d.adapter ? `Deno offers only the software adapter ${d.adapter.description}` : "Deno offers no WebGPU adapter"}: the engine runs on WebAssembly (${count})`;
  }
}

/** The facts of a WebGPU adapter (Deno's GPUAdapter: `info`, older builds' `isFallbackAdapter`). */
export function adapterFacts(adapter: unknown): GpuAdapterFacts | null {
  if (!adapter || typeof adapter !== "object") return null;
  const a = adapter as {
    isFallbackAdapter?: boolean;
    features?: Iterable<string>;
    info?: Partial<Record<"vendor" | "architecture" | "device" | "description", string>> & { isFallbackAdapter?: boolean };
  };
  const info = a.info ?? {};
  const facts = { vendor: String(info.vendor ?? ""), architecture: String(info.architecture ?? ""), device: String(info.device ?? ""), description: String(info.description ?? "") };
  // Mesa's software drivers carry Mesa's Vulkan vendor id (0x10005) and say what they are.
  const software = (info.isFallbackAdapter ?? a.isFallbackAdapter ?? false) || facts.vendor === "65541" || /llvmpipe|lavapipe|softpipe|swiftshader/i.test(facts.description);
  return { ...facts, software, features: [...(a.features ?? [])] };
}

/**
 * The runtime's WebGPU (Deno, browsers; Node 20 has none). Read here rather than through
 * backend-ort-web.ts, whose imports (the model card's schema, the runtime's glue) the
 * doctor does not need.
 */
const navigatorGpu = () => (globalThis as { navigator?: { gpu?: { requestAdapter(): Promise<unknown> } | null } }).navigator?.gpu ?? undefined;

/** Asks the runtime's WebGPU for an adapter, within `timeoutMs`. */
export async function requestAdapterFacts(timeoutMs = 30_000): Promise<{ adapter: GpuAdapterFacts | null; error?: string }> {
  const gpu = navigatorGpu();
  if (!gpu) return { adapter: null };
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs)));
    return { adapter: adapterFacts(await Promise.race([gpu.requestAdapter(), late])) };
  } catch (err) {
    return { adapter: null, error: `requestAdapter failed: ${messageOf(err)}` };
  } finally {
    clearTimeout(timer);
  }
}

export function summarizeDiagnosis(d: GpuDiagnosis): GpuDiagnosisSummary {
  const adapter = d.adapter ? { adapter: d.adapter.description || d.adapter.vendor, software: d.adapter.software } : {};
  return { verdict: d.verdict, summary: d.summary, ...adapter, gpuPresent: d.gpuPresent, problems: d.problems };
}
