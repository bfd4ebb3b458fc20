// Whether wgpu's OpenGL backend was started, read from a process's memory map
// (/proc/self/maps): left to all its backends, Deno's wgpu also opens OpenGL through
// libglvnd's libEGL.so.1, which loads Mesa's libEGL_mesa, and Mesa's exit handler can race a
// runtime thread's exit and abort the process after the last test ("double free or
// corruption (out)", about 1 run in 20). NVIDIA's own Vulkan driver loads its
// libEGL_nvidia.so on a Vulkan-only run, which says nothing about OpenGL: it is not counted.
// libglvnd's dispatcher counts on a software adapter (Mesa), where nothing but the OpenGL
// backend loads it; Mesa's EGL counts everywhere.

/** The path of the EGL library that shows the OpenGL backend ran, or undefined. */
export function openGlEglIn(maps: string, softwareAdapter: boolean): string | undefined {
  const paths = maps.split("\n").map((line) => line.trim().split(/\s+/).at(-1) ?? "");
  return paths.find((p) => /\/libEGL_mesa\.so[.\d]*$/.test(p) || (softwareAdapter && /\/libEGL\.so[.\d]*$/.test(p)));
}
