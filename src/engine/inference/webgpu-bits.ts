// WebGPU's buffer usage, map mode and shader stage bits, fixed by the WebGPU spec. Written
// out here because Node has no GPUBufferUsage globals to import them from, and one module
// names them for every file that makes buffers (webgpu-io.ts, the planned run).
export const MAP_READ = 0x1;
export const COPY_SRC = 0x4;
export const COPY_DST = 0x8;
export const UNIFORM = 0x40;
export const STORAGE = 0x80;
export const MAP_MODE_READ = 0x1;
export const SHADER_COMPUTE = 0x4;
