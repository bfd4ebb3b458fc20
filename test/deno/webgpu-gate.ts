// The one rule for Deno tests that need a WebGPU adapter: without one (no Mesa Vulkan
// driver and no GPU) they are skipped with one line naming the packages to install, so a
// fresh clone's `npm test` passes; CI installs them (.ci/run) and sets PD_REQUIRE_WEBGPU=1,
// which turns the skip into a failure.

export const NO_ADAPTER = "no WebGPU adapter: install Mesa's Vulkan driver (apt-get install mesa-vulkan-drivers libvulkan1)";
const REQUIRED = Deno.env.get("PD_REQUIRE_WEBGPU") === "1";
const HAS_ADAPTER = (await navigator.gpu?.requestAdapter().catch(() => null)) != null;
const SKIP = !HAS_ADAPTER && !REQUIRED;

/** Deno.test for a test that needs an adapter; `file` names the test file in the skip line, said once per file. */
export function gpuTestIn(file: string): (name: string, fn: () => Promise<void>) => void {
  if (SKIP) console.log(`${file}: skipped, ${NO_ADAPTER}`);
  return (name, fn) => Deno.test({ name, ignore: SKIP, fn });
}
