// JPEG decoding with libjpeg-turbo's TurboJPEG API, as built for WebAssembly by the
// @cwasm/jpeg-turbo package. Only its .wasm file is used (the package's own index.js
// reads the file with require() at import time and keeps one instance per process); this
// file is the glue. Chosen by measurement (bench/decoders.ts, docs/BENCHMARKS.md): at full
// size its pixels are the same bytes as MozJPEG's (@jsquash/jpeg, which it replaced), it
// decodes faster, and it decodes at k/8 of the size (libjpeg's DCT scaling), which spares
// most of the inverse transforms and colour conversion when only a smaller picture is needed.
//
// The module is a standalone (WASI) build: its setjmp always returns 0 and its longjmp is
// ours, a throw, so any libjpeg error (and, with STOP_ON_WARNING, any warning) unwinds
// the WebAssembly stack to here and leaves the instance's stack pointer and heap as they
// were mid-call. Such an instance is dropped; the next call starts a fresh one. A clean
// call keeps its instance for the next (a fresh heap costs a 12 MP decode thousands of
// page faults, docs/DECISIONS.md).
import type { CodecOutcome } from "./codec-types.ts";
import { describeThrown } from "./codec-types.ts";
import { compileWasm } from "./wasm-loader.ts";
import type { PixelMemory } from "./glue-pixels-into.ts";

/** TurboJPEG's pixel format for R, G, B, A bytes (alpha set to 255). */
const TJPF_RGBA = 7;
/** TurboJPEG 2.0's flag: stop at the first warning, as at an error. */
const TJFLAG_STOPONWARNING = 8192;

/** libjpeg's warnings for data that stops early; the decoder pads with grey and carries on. */
export const TRUNCATION_WARNING = /premature end of (jpeg file|data segment)/i;

/**
 * TurboJPEG formats every libjpeg message into one static buffer that starts as this
 * text. Its address is a fact of the compiled module: found once per module by looking
 * for the text, it is reset before each call and read after a failure, which is how a
 * truncation is told from other damage (the module exports no tjGetErrorStr).
 */
const NO_ERROR = "No error";

/** The output side for `side` pixels decoded at eighths/8 (libjpeg rounds up). */
export function scaledSide(side: number, eighths: number): number {
  return Math.ceil((side * eighths) / 8);
}

interface Exports {
  memory: WebAssembly.Memory;
  malloc(n: number): number;
  free(p: number): void;
  tjInitDecompress(): number;
  tjDestroy(h: number): number;
  tjDecompressHeader3(h: number, src: number, size: number, w: number, hgt: number, subsamp: number, colourspace: number): number;
  tjDecompress2(h: number, src: number, size: number, dst: number, width: number, pitch: number, height: number, format: number, flags: number): number;
}

class LongJump extends Error {}

function instantiate(module: WebAssembly.Module): Exports {
  const refuse = (name: string) => () => {
    throw new Error(`libjpeg-turbo called ${name}, which this build does not provide`);
  };
  const instance = new WebAssembly.Instance(module, {
    env: {
      setjmp: () => 0,
      longjmp: () => {
        throw new LongJump("libjpeg stopped the decode");
      },
    },
    wasi_snapshot_preview1: {
      environ_sizes_get: () => 0,
      environ_get: refuse("environ_get"),
      proc_exit: refuse("proc_exit"),
      fd_close: refuse("fd_close"),
      fd_seek: refuse("fd_seek"),
      fd_write: refuse("fd_write"),
    },
  });
  return instance.exports as unknown as Exports;
}

/** Every place in a fresh instance's memory that holds NO_ERROR and its terminating zero. */
function noErrorSlots(x: Exports): number[] {
  const mem = new Uint8Array(x.memory.buffer);
  const text = new TextEncoder().encode(`${NO_ERROR}\0`);
  const slots: number[] = [];
  for (let i = mem.indexOf(text[0]!); i >= 0; i = mem.indexOf(text[0]!, i + 1)) {
    let k = 1;
    while (k < text.length && mem[i + k] === text[k]) k++;
    if (k === text.length) slots.push(i);
  }
  return slots;
}

/** The C string at `at`, at most 200 bytes (libjpeg's JMSG_LENGTH_MAX). */
function cString(x: Exports, at: number): string {
  const mem = new Uint8Array(x.memory.buffer, at, Math.min(200, x.memory.buffer.byteLength - at));
  const end = mem.indexOf(0);
  return new TextDecoder().decode(mem.subarray(0, end < 0 ? mem.length : end));
}

/**
 * A decoder: `eighths` (1..8, default 8) is the scale, k/8 of each side. `into` gives the
 * memory the pixels are copied to out of the instance's heap (default: a new array).
 * release() drops the instance kept between calls, whose heap is as large as the largest
 * image it decoded.
 */
export type JpegTurboDecode = ((bytes: Uint8Array, into?: PixelMemory, eighths?: number) => Promise<CodecOutcome>) & { release(): void };

export function jpegTurboDecoder(): JpegTurboDecode {
  let compiled: Promise<{ module: WebAssembly.Module; slots: number[] }> | undefined;
  let kept: Exports | undefined;

  const compile = async () => {
    const module = await compileWasm("@cwasm/jpeg-turbo/jpeg-turbo.wasm");
    // The instance the message buffer was found in is fresh: the first decode takes it.
    const fresh = instantiate(module);
    const slots = noErrorSlots(fresh);
    kept ??= fresh;
    return { module, slots };
  };

  /** One decode on one instance; a throw means the instance is spent. `warned`: libjpeg warned on the way. */
  const run = (x: Exports, slots: number[], bytes: Uint8Array, into: PixelMemory | undefined, eighths: number, flags: number): CodecOutcome & { warned?: boolean } => {
    const reset = new TextEncoder().encode(`${NO_ERROR}\0`);
    for (const s of slots) new Uint8Array(x.memory.buffer).set(reset, s);
    const message = () => slots.map((s) => cString(x, s)).find((m) => m !== NO_ERROR) ?? "";
    const src = x.malloc(bytes.length);
    const facts = x.malloc(16);
    const handle = x.tjInitDecompress();
    let dst = 0;
    try {
      if (!src || !facts || !handle) return { ok: false, reason: "libjpeg-turbo could not allocate memory" };
      new Uint8Array(x.memory.buffer, src, bytes.length).set(bytes);
      if (x.tjDecompressHeader3(handle, src, bytes.length, facts, facts + 4, facts + 8, facts + 12) !== 0) {
        return { ok: false, reason: message() || "libjpeg-turbo could not read the header" };
      }
      const [fullWidth, fullHeight] = new Int32Array(x.memory.buffer, facts, 2);
      const width = scaledSide(fullWidth!, eighths);
      const height = scaledSide(fullHeight!, eighths);
      const n = width * height * 4;
      dst = x.malloc(n);
      if (!dst) return { ok: false, reason: `libjpeg-turbo could not allocate ${n} bytes` };
      // Asked for width x height, TurboJPEG picks the largest scale whose output fits in it:
      // exactly eighths/8 here, since that is how the size was worked out.
      const status = x.tjDecompress2(handle, src, bytes.length, dst, width, width * 4, height, TJPF_RGBA, flags);
      if (status !== 0 && flags & TJFLAG_STOPONWARNING) return { ok: false, reason: message() || "libjpeg-turbo failed" };
      const pixels = into ? into(n) : new Uint8Array(n);
      if (pixels.length !== n) throw new RangeError(`PixelMemory gave ${pixels.length} bytes for ${n}`);
      pixels.set(new Uint8Array(x.memory.buffer, dst, n));
      return { ok: true, image: { width, height, data: new Uint8ClampedArray(pixels.buffer, pixels.byteOffset, n) }, warned: status !== 0 };
    } finally {
      // Reached after a throw too; the caller drops the instance then, so freeing is moot.
      if (dst) x.free(dst);
      if (handle) x.tjDestroy(handle);
      if (facts) x.free(facts);
      if (src) x.free(src);
    }
  };

  const decode = async (bytes: Uint8Array, into?: PixelMemory, eighths = 8): Promise<CodecOutcome> => {
    if (!Number.isInteger(eighths) || eighths < 1 || eighths > 8) throw new RangeError(`jpeg scale ${eighths}/8: 1/8 to 8/8 only`);
    // A failed load is a deployment fault, not a bad image: let it throw, and retry the
    // load next time instead of caching the rejection.
    const pending = (compiled ??= compile());
    pending.catch(() => {
      if (compiled === pending) compiled = undefined;
    });
    const { module, slots } = await pending;
    // From here on nothing awaits: no other call on this thread can use the instance meanwhile.
    const attempt = (flags: number): { outcome: CodecOutcome; message: string } => {
      const x = (kept ??= instantiate(module));
      let clean = false;
      try {
        const { warned, ...outcome } = run(x, slots, bytes, into, eighths, flags);
        // A warning leaves a usable instance, but like any unusual call it is not kept.
        clean = outcome.ok && !warned;
        return { outcome, message: outcome.ok ? "" : outcome.reason };
      } catch (e) {
        const message = slots.map((s) => cString(x, s)).find((m) => m !== NO_ERROR) || describeThrown(e);
        return { outcome: { ok: false, reason: message }, message };
      } finally {
        if (!clean && kept === x) kept = undefined;
      }
    };
    // First with every warning stopping the decode: data that ends early stops at its first
    // warning instead of being padded with grey to the whole declared frame (a 400-byte
    // file declaring 12 MP cost about 0.9 s before; test/fuzz).
    const first = attempt(TJFLAG_STOPONWARNING);
    if (first.outcome.ok) return first.outcome;
    if (TRUNCATION_WARNING.test(first.message)) return { ok: false, reason: first.message, truncated: true };
    // Another warning (junk bytes before a marker, a bad Huffman code) or an error: once
    // more without stopping. libjpeg reports only the first warning, so a warned decode
    // that completes is a picture, as libjpeg itself would give it; an error stays one.
    return attempt(0).outcome;
  };

  return Object.assign(decode, {
    release: () => {
      kept = undefined;
    },
  });
}
