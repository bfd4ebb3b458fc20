// The WebGPU tests' check that wgpu's OpenGL backend did not run (test/deno/egl-check.ts),
// on memory maps of the kinds seen: Mesa's lavapipe with every backend (flagged), with
// Vulkan alone (clean), and NVIDIA's Vulkan driver, which loads libEGL_nvidia by itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openGlEglIn } from "./egl-check.ts";

const map = (...paths: string[]) => paths.map((p, i) => `7f00${i}000-7f00${i}fff r-xp 00000000 08:01 ${1000 + i}   ${p}`).join("\n");
const LIB = "/usr/lib/x86_64-linux-gnu";

test("Mesa with every wgpu backend: libglvnd's libEGL and Mesa's are flagged", () => {
  const maps = map(`${LIB}/libvulkan.so.1.3.239`, `${LIB}/libvulkan_lvp.so`, `${LIB}/libEGL_mesa.so.0.0.0`, `${LIB}/libGLdispatch.so.0.0.0`, `${LIB}/libEGL.so.1.1.0`);
  assert.equal(openGlEglIn(maps, true), `${LIB}/libEGL_mesa.so.0.0.0`);
  assert.equal(openGlEglIn(map(`${LIB}/libEGL.so.1.1.0`), true), `${LIB}/libEGL.so.1.1.0`);
});

test("Mesa with Vulkan alone: nothing flagged", () => {
  assert.equal(openGlEglIn(map(`${LIB}/libvulkan.so.1.3.239`, `${LIB}/libvulkan_lvp.so`, `${LIB}/libVkLayer_MESA_device_select.so`, "[heap]", ""), true), undefined);
});

test("NVIDIA's Vulkan driver loads its own libEGL_nvidia: not flagged; Mesa's EGL beside it still is", () => {
  const nvidia = [`${LIB}/libvulkan.so.1.3.239`, `${LIB}/libGLX_nvidia.so.580.95.05`, `${LIB}/libGLdispatch.so.0.0.0`, `${LIB}/libEGL_nvidia.so.580.95.05`, `${LIB}/libnvidia-eglcore.so.580.95.05`];
  assert.equal(openGlEglIn(map(...nvidia), false), undefined);
  assert.equal(openGlEglIn(map(...nvidia, `${LIB}/libEGL_mesa.so.0.0.0`), false), `${LIB}/libEGL_mesa.so.0.0.0`);
});
