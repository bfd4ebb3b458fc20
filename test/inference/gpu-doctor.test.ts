// The GPU diagnosis (src/engine/inference/gpu-doctor.ts) on made-up hosts: each way a GPU
// host ends up without a hardware WebGPU adapter is named with its fix, and nothing is
// reported where nothing is wrong. The real host's run under Deno on Mesa is
// test/deno/gpu_doctor_test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { adapterFacts, diagnoseGpu, type GpuAdapterFacts } from "../../src/engine/inference/gpu-doctor.ts";
import { findLibrary, libraryDirs } from "../../src/engine/inference/gpu-host.ts";
import { gpuStartReport, startReportOf } from "../../src/engine/library/gpu-start-report.ts";
import { DEBIAN_LD_CONF, fakeHost, LIB, NVIDIA_ICD, NVIDIA_NODES } from "../support/fake-gpu-host.ts";

const LLVMPIPE: GpuAdapterFacts = { vendor: "65541", architecture: "", device: "0", description: "llvmpipe (LLVM 15.0.6, 256 bits)", software: true, features: ["shader-f16"] };
const H100: GpuAdapterFacts = { vendor: "4318", architecture: "", device: "8960", description: "NVIDIA H100 80GB HBM3", software: false, features: ["shader-f16", "timestamp-query"] };

/** An NVIDIA host with everything WebGPU needs; each test takes one piece away. */
const nvidiaHost = {
  ...DEBIAN_LD_CONF,
  ...NVIDIA_NODES,
  [`${LIB}/libvulkan.so.1`]: "",
  [`${LIB}/libGLX_nvidia.so.0`]: "",
  [`${LIB}/libGLdispatch.so.0`]: "",
  "/usr/share/vulkan/icd.d/nvidia_icd.json": NVIDIA_ICD,
};
const without = (files: Record<string, string>, ...paths: string[]) => Object.fromEntries(Object.entries(files).filter(([p]) => !paths.includes(p)));

/** Deno on a host, the adapter it offered given (null: none). */
const onDeno = (files: Record<string, string>, adapter: GpuAdapterFacts | null, env: Record<string, string> = {}, closed?: string[]) =>
  diagnoseGpu({ runtime: "deno", adapter, host: fakeHost({ files, env, closed }) });

test("no GPU under Node: WebGPU needs Deno, nothing is wrong, and only /dev was looked at", async () => {
  const host = fakeHost({ files: { ...DEBIAN_LD_CONF, "/dev/null": "" } });
  const d = await diagnoseGpu({ runtime: "node", host });
  assert.equal(d.verdict, "needs-deno");
  assert.deepEqual(d.problems, []);
  assert.deepEqual(d.devices, []);
  assert.match(d.summary, /WebGPU needs Deno.*no GPU device/);
  assert.deepEqual(host.touched, ["/dev", "/dev/dri"], "cheap where there is no GPU: no library or driver file read");
});

test("Mesa's software adapter without a GPU is no error; the adapter passed in is not asked for again", async () => {
  let asked = 0;
  const d = await diagnoseGpu({ runtime: "deno", adapter: LLVMPIPE, host: fakeHost(), requestAdapter: async () => (asked++, { adapter: H100 }) });
  assert.equal(asked, 0);
  assert.equal(d.verdict, "software-only");
  assert.deepEqual(d.problems, []);
  assert.equal(d.adapter?.software, true);
  assert.match(d.summary, /only a software WebGPU adapter \(llvmpipe/);
  assert.match(d.notes.join(" "), /Not an error/);
  // Without an adapter passed, it is asked for once.
  const asking = await diagnoseGpu({ runtime: "deno", host: fakeHost(), requestAdapter: async () => (asked++, { adapter: LLVMPIPE }) });
  assert.equal(asked, 1);
  assert.equal(asking.verdict, "software-only");
});

test("a hardware adapter: verdict gpu, no problems, and no driver file read", async () => {
  const host = fakeHost({ files: without(nvidiaHost, `${LIB}/libGLdispatch.so.0`) });
  const d = await diagnoseGpu({ runtime: "deno", adapter: H100, host });
  assert.equal(d.verdict, "gpu");
  assert.deepEqual(d.problems, []);
  assert.deepEqual(d.devices, ["/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"]);
  assert.match(d.summary, /WebGPU on NVIDIA H100/);
  assert.ok(!host.touched.some((p) => p.includes("vulkan") || p.includes("ld.so")), host.touched.join(" "));
});

test("the stock H100 host: NVIDIA's Vulkan driver present but libglvnd missing is the one problem named", async () => {
  const d = await onDeno(without(nvidiaHost, `${LIB}/libGLdispatch.so.0`), null);
  assert.equal(d.verdict, "gpu-unusable");
  assert.equal(d.problems.length, 1, d.problems.join("\n"));
  assert.match(d.problems[0]!, /libGLdispatch\.so\.0.*libGLX_nvidia\.so\.0.*apt-get install libglvnd0 libegl1 libgl1 libglx0 libopengl0 libgles2/);
  assert.match(d.summary, /^GPU present \(\/dev\/nvidia0\) but Deno offers no WebGPU adapter.*1 problem\)$/);
  // Mesa installed beside it: Deno offers lavapipe, and the GPU is still unusable.
  const mesa = await onDeno(without(nvidiaHost, `${LIB}/libGLdispatch.so.0`), LLVMPIPE);
  assert.equal(mesa.verdict, "gpu-unusable");
  assert.match(mesa.summary, /only the software adapter llvmpipe/);
});

test("no Vulkan loader: named with the package that has it", async () => {
  const d = await onDeno(without(nvidiaHost, `${LIB}/libvulkan.so.1`), null);
  assert.deepEqual(d.problems.length, 1, d.problems.join("\n"));
  assert.match(d.problems[0]!, /Vulkan loader \(libvulkan\.so\.1\) is missing.*apt-get install libvulkan1/);
});

test("NVIDIA's ICD where the loader does not look: VK_DRIVER_FILES named; set, the problem is gone", async () => {
  const icd = "/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json";
  const files = { ...without(nvidiaHost, "/usr/share/vulkan/icd.d/nvidia_icd.json"), [icd]: NVIDIA_ICD, "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json": JSON.stringify({ ICD: { library_path: `${LIB}/libvulkan_lvp.so` } }) };
  const d = await onDeno(files, LLVMPIPE);
  assert.deepEqual(d.problems, [`NVIDIA's Vulkan ICD file ${icd} is in a folder the Vulkan loader does not search: set VK_DRIVER_FILES=${icd}.`]);
  // VK_DRIVER_FILES replaces the search: the NVIDIA ICD found, nothing is missing but the adapter itself.
  const set = await onDeno(files, null, { VK_DRIVER_FILES: icd });
  assert.equal(set.problems.length, 1);
  assert.match(set.problems[0]!, /look present: run vulkaninfo --summary/);
  // VK_DRIVER_FILES naming only Mesa's hides the system's NVIDIA ICD.
  const wrong = await onDeno(nvidiaHost, null, { VK_DRIVER_FILES: "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json" });
  assert.match(wrong.problems.join(" "), /VK_DRIVER_FILES names no NVIDIA ICD file/);
});

test("no NVIDIA ICD anywhere on a host: the driver's Vulkan part is named", async () => {
  const d = await onDeno(without(nvidiaHost, "/usr/share/vulkan/icd.d/nvidia_icd.json"), null);
  assert.equal(d.problems.length, 1, d.problems.join("\n"));
  assert.match(d.problems[0]!, /No NVIDIA Vulkan ICD file \(nvidia_icd\.json\).*install the NVIDIA driver's Vulkan part/);
});

test("a container started without the graphics capability: that cause alone, not its consequences", async () => {
  const computeOnly = { ...without(nvidiaHost, "/usr/share/vulkan/icd.d/nvidia_icd.json", `${LIB}/libGLX_nvidia.so.0`), [`${LIB}/libcuda.so.1`]: "", [`${LIB}/libnvidia-ml.so.1`]: "" };
  const d = await onDeno(computeOnly, null, { NVIDIA_VISIBLE_DEVICES: "all", NVIDIA_DRIVER_CAPABILITIES: "compute,utility" });
  assert.equal(d.problems.length, 1, d.problems.join("\n"));
  assert.match(d.problems[0]!, /without NVIDIA's graphics driver capability \(NVIDIA_DRIVER_CAPABILITIES=compute,utility\).*NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics/);
  const unset = await onDeno(computeOnly, null, { NVIDIA_VISIBLE_DEVICES: "all" });
  assert.match(unset.problems[0]!, /NVIDIA_DRIVER_CAPABILITIES=unset, which means utility,compute/);
  // The toolkit's variables not in sight (a runtime that passes devices by itself): the
  // mounted compute libraries without the Vulkan driver tell the same story.
  const bare = await onDeno({ ...computeOnly, "/.dockerenv": "" }, null);
  assert.equal(bare.problems.length, 1, bare.problems.join("\n"));
  assert.match(bare.problems[0]!, /compute libraries but not its Vulkan driver.*graphics driver capability/);
  // With graphics asked for (or all) and the driver there, the capability is not blamed.
  const fine = await onDeno(without(nvidiaHost, `${LIB}/libGLdispatch.so.0`), null, { NVIDIA_VISIBLE_DEVICES: "all", NVIDIA_DRIVER_CAPABILITIES: "all" });
  assert.ok(!fine.problems.some((p) => /capability/.test(p)), fine.problems.join("\n"));
  // libglvnd is the image's to carry, whatever the capability: both are named.
  const both = await onDeno(without(computeOnly, `${LIB}/libGLdispatch.so.0`), null, { NVIDIA_VISIBLE_DEVICES: "all" });
  assert.equal(both.problems.length, 2, both.problems.join("\n"));
  assert.match(both.problems[1]!, /libGLdispatch/);
});

test("the ICD's library off the linker's path: LD_LIBRARY_PATH named; LD_LIBRARY_PATH and ld.so.conf.d entries are searched", async () => {
  const files = { ...without(nvidiaHost, `${LIB}/libGLX_nvidia.so.0`, `${LIB}/libGLdispatch.so.0`), "/usr/local/nvidia/lib64/libGLX_nvidia.so.0": "", "/usr/local/nvidia/lib64/libGLdispatch.so.0": "" };
  const d = await onDeno(files, null);
  assert.equal(d.problems.length, 2, d.problems.join("\n"));
  assert.match(d.problems[0]!, /names libGLX_nvidia\.so\.0, which is in \/usr\/local\/nvidia\/lib64, off the dynamic linker's path: add \/usr\/local\/nvidia\/lib64 to LD_LIBRARY_PATH/);
  const viaEnv = await onDeno(files, null, { LD_LIBRARY_PATH: "/opt/x:/usr/local/nvidia/lib64" });
  assert.ok(!viaEnv.problems.some((p) => /libGLX_nvidia\.so\.0, which|libGLdispatch/.test(p)), viaEnv.problems.join("\n"));
  const viaConf = await onDeno({ ...files, "/etc/ld.so.conf.d/000_nvidia.conf": "/usr/local/nvidia/lib64\n" }, null);
  assert.ok(!viaConf.problems.some((p) => /libGLX_nvidia\.so\.0, which|libGLdispatch/.test(p)), viaConf.problems.join("\n"));
});

test("library lookup: LD_LIBRARY_PATH first, then ld.so.conf (includes followed, comments skipped), then the built-in folders", () => {
  const host = fakeHost({
    files: { "/etc/ld.so.conf": "# comment\ninclude ld.so.conf.d/*.conf\n/opt/direct\n", "/etc/ld.so.conf.d/a.conf": "/opt/a # trailing\n", "/etc/ld.so.conf.d/b.txt": "/opt/never\n", "/opt/a/libx.so.1": "", "/lib64/libx.so.1": "" },
    env: { LD_LIBRARY_PATH: "/first::/second" },
  });
  const dirs = libraryDirs(host);
  assert.deepEqual(dirs.slice(0, 4), ["/first", "/second", "/opt/a", "/opt/direct"]);
  assert.ok(!dirs.includes("/opt/never"));
  assert.ok(dirs.includes(`/usr/lib/x86_64-linux-gnu`) && dirs.at(-1) === "/usr/lib");
  assert.equal(findLibrary(host, "libx.so.1"), "/opt/a/libx.so.1");
  assert.equal(findLibrary(host, "liby.so.1"), undefined);
});

test("an unreadable or closed device, and DENO_WEBGPU_BACKEND without Vulkan, are named", async () => {
  const closed = await onDeno(nvidiaHost, null, {}, ["/dev/nvidia0", "/dev/nvidiactl"]);
  assert.equal(closed.problems.length, 1, closed.problems.join("\n"));
  assert.match(closed.problems[0]!, /cannot open \/dev\/nvidia0, \/dev\/nvidiactl for reading and writing/);
  const gl = await onDeno(nvidiaHost, null, { DENO_WEBGPU_BACKEND: "gl" });
  assert.match(gl.problems[0]!, /DENO_WEBGPU_BACKEND=gl leaves out Vulkan.*DENO_WEBGPU_BACKEND=vulkan/);
  const vulkan = await onDeno(nvidiaHost, null, { DENO_WEBGPU_BACKEND: "vulkan,metal,dx12" });
  assert.ok(!vulkan.problems.some((p) => p.includes("DENO_WEBGPU_BACKEND")));
});

test("everything present yet no adapter: said so, with the adapter request's own error and where to look next", async () => {
  const d = await diagnoseGpu({ runtime: "deno", host: fakeHost({ files: nvidiaHost }), requestAdapter: async () => ({ adapter: null, error: "requestAdapter failed: boom" }) });
  assert.equal(d.verdict, "gpu-unusable");
  assert.equal(d.adapterError, "requestAdapter failed: boom");
  assert.equal(d.problems.length, 1);
  assert.match(d.problems[0]!, /Deno offered no WebGPU adapter \(requestAdapter failed: boom\) although \/dev\/nvidia0 exists.*vulkaninfo --summary/);
});

test("render nodes: Intel or AMD without a Vulkan driver names Mesa's; a VM's virtual adapter is no GPU", async () => {
  const intel = { ...DEBIAN_LD_CONF, "/dev/dri/renderD128": "", "/dev/dri/card0": "", "/sys/class/drm/renderD128/device/vendor": "0x8086\n", [`${LIB}/libvulkan.so.1`]: "" };
  const d = await onDeno(intel, LLVMPIPE);
  assert.equal(d.verdict, "gpu-unusable");
  assert.deepEqual(d.devices, ["/dev/dri/renderD128"]);
  assert.equal(d.problems.length, 1, d.problems.join("\n"));
  assert.match(d.problems[0]!, /No Vulkan driver for the GPU at \/dev\/dri\/renderD128: install Mesa's.*mesa-vulkan-drivers/);
  // With Mesa's Intel driver installed (and still no hardware adapter) that is not the problem.
  const withMesa = await onDeno({ ...intel, "/usr/share/vulkan/icd.d/intel_icd.x86_64.json": JSON.stringify({ ICD: { library_path: `${LIB}/libvulkan_intel.so` } }), [`${LIB}/libvulkan_intel.so`]: "" }, null);
  assert.match(withMesa.problems[0]!, /look present/);
  const virtio = await onDeno({ "/dev/dri/renderD128": "", "/sys/class/drm/renderD128/device/vendor": "0x1af4\n" }, LLVMPIPE);
  assert.equal(virtio.verdict, "software-only");
  assert.equal(virtio.gpuPresent, false);
  assert.deepEqual(virtio.devices, ["/dev/dri/renderD128"]);
  // An NVIDIA render node counts as NVIDIA's.
  const nvRender = await onDeno({ ...without(nvidiaHost, "/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm", `${LIB}/libGLdispatch.so.0`), "/dev/dri/renderD128": "", "/sys/class/drm/renderD128/device/vendor": "0x10de\n" }, null);
  assert.match(nvRender.problems.join(" "), /libGLdispatch/);
});

test("Node on a GPU host: WebGPU needs Deno, not an error, and what Deno would need is listed", async () => {
  const d = await diagnoseGpu({ runtime: "node", host: fakeHost({ files: without(nvidiaHost, `${LIB}/libGLdispatch.so.0`) }) });
  assert.equal(d.verdict, "needs-deno");
  assert.equal(d.gpuPresent, true);
  assert.match(d.summary, /WebGPU needs Deno \(this is node\); GPU present \(\/dev\/nvidia0\), unused, 1 problem for Deno/);
  assert.match(d.problems[0]!, /libGLdispatch/);
});

test("not Linux: no device files read; a hardware adapter (Metal) is a GPU", async () => {
  const host = fakeHost({ platform: "darwin", files: nvidiaHost });
  const d = await diagnoseGpu({ runtime: "deno", adapter: { ...H100, description: "Apple M2" }, host });
  assert.equal(d.verdict, "gpu");
  assert.deepEqual(host.touched, []);
});

test("never throws: a host that fails is reported, not raised", async () => {
  const host = { ...fakeHost(), list: () => { throw new Error("disk on fire"); } };
  const d = await diagnoseGpu({ runtime: "deno", adapter: null, host });
  assert.equal(d.verdict, "no-gpu");
  assert.match(d.summary, /the GPU check itself failed: disk on fire/);
});

test("adapter facts: Deno's info, the fallback flag, Mesa's vendor id and its names all mean software", () => {
  assert.equal(adapterFacts(null), null);
  assert.equal(adapterFacts({ info: { vendor: "4318", architecture: "hopper", device: "8960", description: "NVIDIA H100", isFallbackAdapter: false } })?.software, false);
  assert.equal(adapterFacts({ info: { vendor: "x", description: "GPU" }, isFallbackAdapter: true })?.software, true);
  assert.equal(adapterFacts({ info: { vendor: "65541", description: "" } })?.software, true);
  assert.equal(adapterFacts({ info: { vendor: "0", description: "SwiftShader Device (Subzero)" } })?.software, true);
  assert.deepEqual(adapterFacts({ info: { vendor: "4318", description: "NVIDIA H100" }, features: new Set(["shader-f16"]) }), { vendor: "4318", architecture: "", device: "", description: "NVIDIA H100", software: false, features: ["shader-f16"] });
});

test("the start-up report: a warning with every problem when a GPU goes unused, one info line otherwise", async () => {
  const unusable = await gpuStartReport({ runtime: "deno", adapter: null, host: fakeHost({ files: without(nvidiaHost, `${LIB}/libGLdispatch.so.0`, `${LIB}/libvulkan.so.1`) }) });
  assert.match(unusable.warn ?? "", /^GPU: GPU present \(\/dev\/nvidia0\) but Deno offers no WebGPU adapter.*\. The Vulkan loader .* libglvnd's libGLdispatch\.so\.0/);
  assert.equal(unusable.detail.verdict, "gpu-unusable");
  assert.equal(unusable.detail.problems.length, 2);
  const software = await gpuStartReport({ runtime: "deno", adapter: LLVMPIPE, host: fakeHost() });
  assert.equal(software.warn, undefined);
  assert.match(software.line, /^GPU: only a software WebGPU adapter \(llvmpipe/);
  assert.deepEqual(software.detail, { verdict: "software-only", summary: software.detail.summary, adapter: LLVMPIPE.description, software: true, gpuPresent: false, problems: [] });
  const nodeOnGpu = await gpuStartReport({ runtime: "node", host: fakeHost({ files: nvidiaHost }) });
  assert.match(nodeOnGpu.warn ?? "", /Start the service on Deno/);
  assert.equal((await gpuStartReport({ runtime: "node", host: fakeHost() })).warn, undefined);
  // An engine that carries the summary gets the same words without a second diagnosis.
  assert.deepEqual(startReportOf(unusable.detail), unusable);
});
