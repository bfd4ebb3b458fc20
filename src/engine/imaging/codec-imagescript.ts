// PNG and four-component JPEG decoding with the standalone WASM decoders shipped in
// the imagescript package (wasm/any/*.wasm). We drive their small exported C-style
// API ourselves (allocate, decode, read the result) instead of loading imagescript's
// Node entry, which pulls in node:fs, node:path and process.env at call time.
//
// Why these: for PNG this decoder measured faster than @jsquash/png on a 12 MP file
// (bench/imaging-codecs.ts); for CMYK/YCCK JPEG the MozJPEG build cannot convert to
// RGB at all ("Unsupported color conversion request"), this one returns CMYK samples.
// As in codec-squoosh.ts, each call gets a fresh instance.
import type { CodecOutcome } from "./codec-types.ts";
import { describeThrown } from "./codec-types.ts";
import { compileWasm } from "./wasm-loader.ts";

interface PngExports {
  memory: WebAssembly.Memory;
  walloc(size: number): number;
  wfree(ptr: number): void;
  /** Returns a pointer to RGBA8 pixels, or a negative status on error. */
  decode(ptr: number, length: number): number;
  width(): number;
  height(): number;
  _initialize?: () => void;
}

interface JpegExports {
  memory: WebAssembly.Memory;
  walloc(size: number): number;
  /** Returns a handle; 0 = decode failed, 1 = scaling failed (we never ask to scale). */
  decode(ptr: number, length: number, width: number, height: number): number;
  decode_width(handle: number): number;
  decode_height(handle: number): number;
  /** 0 = grey (1 byte/pixel), 1 = RGB (3), 2 = CMYK (4, ink amounts: 255 = full ink). */
  decode_format(handle: number): number;
  decode_buffer(handle: number): number;
  /** Length in bytes of the buffer of the last decode. */
  wlen(): number;
  decode_free(handle: number): void;
}

function lazyModule(specifier: string): () => Promise<WebAssembly.Module> {
  let compiled: Promise<WebAssembly.Module> | undefined;
  return () => {
    const pending = (compiled ??= compileWasm(specifier));
    pending.catch(() => {
      if (compiled === pending) compiled = undefined;
    });
    return pending;
  };
}

function copyIn(memory: WebAssembly.Memory, walloc: (n: number) => number, bytes: Uint8Array): number {
  const ptr = walloc(bytes.length);
  // Read memory.buffer after walloc: the allocation may have grown (replaced) it.
  new Uint8Array(memory.buffer).set(bytes, ptr);
  return ptr;
}

export function imagescriptPngDecoder(): (bytes: Uint8Array) => Promise<CodecOutcome> {
  const module = lazyModule("imagescript/wasm/any/png.wasm");
  return async (bytes) => {
    // The decoder tells us when its memory grows; we re-read memory.buffer after each
    // call anyway, so the notification needs no action.
    const instance = new WebAssembly.Instance(await module(), { env: { emscripten_notify_memory_growth() {} } });
    const wasm = instance.exports as unknown as PngExports;
    try {
      wasm._initialize?.();
      const input = copyIn(wasm.memory, wasm.walloc, bytes);
      const result = wasm.decode(input, bytes.length);
      if (result < 0) return { ok: false, reason: `PNG decoder status ${result}` };
      const width = wasm.width();
      const height = wasm.height();
      const data = new Uint8ClampedArray(wasm.memory.buffer.slice(result, result + width * height * 4));
      return { ok: true, image: { width, height, data } };
    } catch (e) {
      return { ok: false, reason: describeThrown(e) };
    }
  };
}

export function imagescriptCmykJpegDecoder(): (bytes: Uint8Array) => Promise<CodecOutcome> {
  const module = lazyModule("imagescript/wasm/any/jpeg.wasm");
  return async (bytes) => {
    const instance = new WebAssembly.Instance(await module(), {});
    const wasm = instance.exports as unknown as JpegExports;
    try {
      const input = copyIn(wasm.memory, wasm.walloc, bytes);
      const handle = wasm.decode(input, bytes.length, 0, 0);
      if (handle === 0 || handle === 1) return { ok: false, reason: "JPEG decoder failed" };
      const width = wasm.decode_width(handle);
      const height = wasm.decode_height(handle);
      const format = wasm.decode_format(handle);
      const start = wasm.decode_buffer(handle);
      const samples = new Uint8Array(wasm.memory.buffer, start, wasm.wlen());
      const perPixel = format === 0 ? 1 : format === 1 ? 3 : format === 2 ? 4 : 0;
      if (perPixel === 0 || samples.length < width * height * perPixel) {
        return { ok: false, reason: `JPEG decoder returned format ${format} with ${samples.length} bytes` };
      }
      return { ok: true, image: { width, height, data: samplesToRgba(samples, width * height, perPixel) } };
    } catch (e) {
      return { ok: false, reason: describeThrown(e) };
    }
  };
}

/**
 * Grey, RGB or CMYK samples to RGBA. CMYK uses the plain subtractive model,
 * R = (255 - C) * (255 - K) / 255; an embedded ICC profile is not applied, so print
 * colours come out somewhat brighter than a colour-managed viewer shows them.
 */
export function samplesToRgba(samples: Uint8Array, pixels: number, perPixel: number): Uint8ClampedArray {
  const out = new Uint8ClampedArray(pixels * 4);
  for (let p = 0, s = 0, o = 0; p < pixels; p++, s += perPixel, o += 4) {
    if (perPixel === 1) {
      out[o] = out[o + 1] = out[o + 2] = samples[s];
    } else if (perPixel === 3) {
      out[o] = samples[s];
      out[o + 1] = samples[s + 1];
      out[o + 2] = samples[s + 2];
    } else {
      const white = 255 - samples[s + 3];
      out[o] = ((255 - samples[s]) * white) / 255;
      out[o + 1] = ((255 - samples[s + 1]) * white) / 255;
      out[o + 2] = ((255 - samples[s + 2]) * white) / 255;
    }
    out[o + 3] = 255;
  }
  return out;
}
