// WebP (libwebp) decoding through the Squoosh WASM build that @jsquash/webp ships (JPEG is
// codec-jpeg-turbo.ts's). We call the Emscripten factory directly rather than the
// package's decode() helper: that keeps one module instance per process and would fetch
// the .wasm by URL, which Node cannot do.
//
// One instance per decoder is kept from call to call while calls succeed cleanly. A
// fresh instance per call cost a 12 MP image about 12,000 page faults for its new heap
// (and as many again for the glue's copy of the pixels, see glue-pixels-into.ts): 20-40
// ms of kernel time on most calls and up to 300 ms on others on this VM (measured,
// docs/BENCHMARKS.md). A codec that aborted on a corrupt file, or a libjpeg exit() on an
// unsupported colour space, leaves its instance in an unknown state, so any call that
// fails or prints a warning drops the instance and the next call starts a fresh one
// (docs/DECISIONS.md).
import type { CodecOutcome } from "./codec-types.ts";
import { describeThrown } from "./codec-types.ts";
import { compileWasm, ensureImageDataClass, importPackageModule } from "./wasm-loader.ts";
import { withPixelsInto, type PixelMemory } from "./glue-pixels-into.ts";
import { TRUNCATION_WARNING } from "./codec-jpeg-turbo.ts";

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

/**
 * Thrown from the stderr callback to stop a decode at its first truncation warning.
 * Left alone, libjpeg pads the missing rest with grey and decodes the whole declared
 * frame: a 400-byte file declaring 12 MP cost about 0.9 s of a worker for an answer
 * that is a 400 anyway (found by test/fuzz). The throw unwinds the WASM stack; the
 * instance is then dropped, so nothing is left in a broken state.
 */
class StopAtTruncation extends Error {}

/**
 * A decoder: `into` gives the memory its pixels go to (default: a new array). release()
 * drops the instance kept between calls (its heap is as large as the largest image it
 * decoded); the next call starts a fresh one.
 */
export type SquooshDecode = ((bytes: Uint8Array, into?: PixelMemory) => Promise<CodecOutcome>) & { release(): void };

/**
 * Where a call's output lines go between calls. Module level on purpose: a closure made
 * inside a call would keep that call's scope, and with it the instance, alive after the
 * instance is dropped.
 */
const ignoreLine = (): void => {};

function squooshDecoder(
  glueSpecifier: string,
  wasmSpecifier: string,
  call: (module: SquooshDecoderModule, bytes: Uint8Array) => DecodedImageData | null,
): SquooshDecode {
  let compiled: Promise<Compiled> | undefined;
  const compile = async (): Promise<Compiled> => {
    const [glue, wasm] = await Promise.all([importPackageModule(glueSpecifier), compileWasm(wasmSpecifier)]);
    return { factory: glue.default as EmscriptenFactory, wasm };
  };
  // The instance kept between clean calls, and where its output lines go during a call.
  let kept: Promise<SquooshDecoderModule> | undefined;
  // Instances a call was not clean on. Another call may already hold one (two decodes
  // awaiting the same instance in one thread), and must not use it.
  const retired = new WeakSet<SquooshDecoderModule>();
  let note: (line: string) => void = ignoreLine;
  const instantiate = ({ factory, wasm }: Compiled): Promise<SquooshDecoderModule> =>
    factory({
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

  const decode = async (bytes: Uint8Array, into?: PixelMemory): Promise<CodecOutcome> => {
    // A failed load is a deployment fault, not a bad image: let it throw, and retry
    // the load next time instead of caching the rejection.
    const pending = (compiled ??= compile());
    pending.catch(() => {
      if (compiled === pending) compiled = undefined;
    });
    const loaded = await pending;
    ensureImageDataClass();
    let instance: Promise<SquooshDecoderModule>;
    let module: SquooshDecoderModule;
    do {
      const current = (instance = kept ??= instantiate(loaded));
      current.catch(() => {
        if (kept === current) kept = undefined;
      });
      module = await current;
    } while (retired.has(module));
    const messages: string[] = [];
    let clean = false;
    note = (line) => {
      messages.push(line);
      if (TRUNCATION_WARNING.test(line)) throw new StopAtTruncation(line);
    };
    try {
      const { value: out, made } = withPixelsInto(into, () => call(module, bytes));
      if (!out) return { ok: false, reason: messages.join("; ") || "the decoder returned no image" };
      if (messages.some((m) => TRUNCATION_WARNING.test(m))) return { ok: false, reason: messages.join("; "), truncated: true };
      clean = messages.length === 0;
      let data = out.data;
      if (made && data === made.returned) data = made.pixels;
      else if (into) {
        const bytesInto = into(data.length);
        bytesInto.set(data);
        data = new Uint8ClampedArray(bytesInto.buffer, bytesInto.byteOffset, bytesInto.length);
      }
      return { ok: true, image: { width: out.width, height: out.height, data } };
    } catch (e) {
      const truncated = e instanceof StopAtTruncation;
      return { ok: false, reason: messages.join("; ") || describeThrown(e), ...(truncated ? { truncated } : {}) };
    } finally {
      note = ignoreLine;
      // Anything but a clean decode (a failure, a throw, a warning) may have left the
      // codec's state or heap unusual: the next call gets a fresh instance.
      if (!clean) {
        retired.add(module);
        if (kept === instance) kept = undefined;
      }
    }
  };
  return Object.assign(decode, {
    release: () => {
      kept = undefined;
    },
  });
}

export function libWebpDecoder(): SquooshDecode {
  return squooshDecoder(
    "@jsquash/webp/codec/dec/webp_dec.js",
    "@jsquash/webp/codec/dec/webp_dec.wasm",
    (module, bytes) => module.decode(bytes),
  );
}
