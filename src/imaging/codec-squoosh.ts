// JPEG (MozJPEG) and WebP (libwebp) decoding through the Squoosh WASM builds that
// @jsquash/jpeg and @jsquash/webp ship. We call the Emscripten factories directly
// rather than the packages' decode() helpers: those keep one module instance per
// process and would fetch the .wasm by URL, which Node cannot do.
//
// Every call gets a fresh instance of the compiled module (about 10 ms). A codec that
// aborted on a corrupt file, or a libjpeg exit() on an unsupported colour space,
// leaves its instance in an unknown state; with one instance per call nothing of it
// survives into the next request, and the grown WASM heap is garbage once we return.
import type { CodecOutcome } from "./codec-types.ts";
import { describeThrown } from "./codec-types.ts";
import { compileWasm, ensureImageDataClass, importPackageModule } from "./wasm-loader.ts";

interface DecodedImageData {
  width: number;
  height: number;
  data: Uint8ClampedArray;
}

interface SquooshDecoderModule {
  decode(data: Uint8Array, ...rest: boolean[]): DecodedImageData | null;
}

type EmscriptenFactory = (options: {
  noInitialRun: boolean;
  instantiateWasm: (imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance) => void) => WebAssembly.Exports;
  print: (line: string) => void;
  printErr: (line: string) => void;
}) => Promise<SquooshDecoderModule>;

interface Compiled {
  factory: EmscriptenFactory;
  wasm: WebAssembly.Module;
}

/** libjpeg's warnings for data that stops early; the decoder pads with grey and carries on. */
const TRUNCATION_WARNING = /premature end of (jpeg file|data segment)/i;

/**
 * Thrown from the stderr callback to stop a decode at its first truncation warning.
 * Left alone, libjpeg pads the missing rest with grey and decodes the whole declared
 * frame: a 400-byte file declaring 12 MP cost about 0.9 s of a worker for an answer
 * that is a 400 anyway (found by test/fuzz). The throw unwinds the WASM stack; the
 * instance is per call and dropped, so nothing is left in a broken state.
 */
class StopAtTruncation extends Error {}

function squooshDecoder(
  glueSpecifier: string,
  wasmSpecifier: string,
  call: (module: SquooshDecoderModule, bytes: Uint8Array) => DecodedImageData | null,
): (bytes: Uint8Array) => Promise<CodecOutcome> {
  let compiled: Promise<Compiled> | undefined;
  const compile = async (): Promise<Compiled> => {
    const [glue, wasm] = await Promise.all([importPackageModule(glueSpecifier), compileWasm(wasmSpecifier)]);
    return { factory: glue.default as EmscriptenFactory, wasm };
  };

  return async (bytes) => {
    // A failed load is a deployment fault, not a bad image: let it throw, and retry
    // the load next time instead of caching the rejection.
    const pending = (compiled ??= compile());
    pending.catch(() => {
      if (compiled === pending) compiled = undefined;
    });
    const { factory, wasm } = await pending;
    ensureImageDataClass();
    const messages: string[] = [];
    let decoding = false;
    const note = (line: string): void => {
      messages.push(line);
      if (decoding && TRUNCATION_WARNING.test(line)) throw new StopAtTruncation(line);
    };
    const module = await factory({
      noInitialRun: true,
      instantiateWasm(imports, done) {
        const instance = new WebAssembly.Instance(wasm, imports);
        done(instance);
        return instance.exports;
      },
      // libjpeg and libwebp report on stderr; keep it for the failure reason instead.
      print: (line) => note(line),
      printErr: (line) => note(line),
    });
    let out: DecodedImageData | null;
    try {
      decoding = true;
      out = call(module, bytes);
    } catch (e) {
      const truncated = e instanceof StopAtTruncation;
      return { ok: false, reason: messages.join("; ") || describeThrown(e), ...(truncated ? { truncated } : {}) };
    } finally {
      decoding = false;
    }
    if (!out) return { ok: false, reason: messages.join("; ") || "the decoder returned no image" };
    if (messages.some((m) => TRUNCATION_WARNING.test(m))) {
      return { ok: false, reason: messages.join("; "), truncated: true };
    }
    return { ok: true, image: { width: out.width, height: out.height, data: out.data } };
  };
}

export function mozJpegDecoder(): (bytes: Uint8Array) => Promise<CodecOutcome> {
  return squooshDecoder(
    "@jsquash/jpeg/codec/dec/mozjpeg_dec.js",
    "@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm",
    // false: return the pixels as stored; orientation is applied separately (orient.ts).
    (module, bytes) => module.decode(bytes, false),
  );
}

export function libWebpDecoder(): (bytes: Uint8Array) => Promise<CodecOutcome> {
  return squooshDecoder(
    "@jsquash/webp/codec/dec/webp_dec.js",
    "@jsquash/webp/codec/dec/webp_dec.wasm",
    (module, bytes) => module.decode(bytes),
  );
}
