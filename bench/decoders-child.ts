// One decoder at one scale in a fresh process, for bench/decoders.ts: its start-up (import,
// compile, instantiate: everything before the first decode can begin), its first decode,
// the median of later ones, and the process's peak RSS. Prints one JSON line.
//
//   node --import tsx bench/decoders-child.ts '{"lib":"jpeg-turbo","eighths":4,"runs":5,"input":"/tmp/x.jpg"}'
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { median } from "./median.ts";

interface Config {
  lib: string;
  /** The scale, in eighths of each side (8: full size). */
  eighths: number;
  runs: number;
  input: string;
  /** A node_modules folder holding the candidates that are not our dependencies (wasm-vips, sharp). */
  candidates?: string;
}

/** What a library gives: the output's sides and its bytes (RGBA unless it says otherwise). */
type Decode = (bytes: Uint8Array) => Promise<{ width: number; height: number; bytes: number }>;

const cfg = JSON.parse(process.argv[2]!) as Config;
const bytes = new Uint8Array(readFileSync(cfg.input));
const fromCandidates = (name: string) => {
  if (!cfg.candidates) throw new Error(`${name} is not a dependency: pass --candidates <a node_modules folder that has it>`);
  return createRequire(join(cfg.candidates, "noop.js"))(name);
};

/** Each library's start-up, resolving to its decode at cfg.eighths. */
const LIBRARIES: Record<string, (eighths: number) => Promise<Decode>> = {
  /** Ours: libjpeg-turbo's TurboJPEG from @cwasm/jpeg-turbo (src/engine/imaging/codec-jpeg-turbo.ts). */
  async "jpeg-turbo"(eighths) {
    const { jpegTurboDecoder } = await import("../src/engine/imaging/codec-jpeg-turbo.ts");
    const decode = jpegTurboDecoder();
    // A 1-pixel-wide decode of nothing would not compile it: a tiny real JPEG does.
    await decode(readFileSync(new URL("../test/fixtures/images/orient-1.jpg", import.meta.url)));
    return async (b) => {
      const r = await decode(b, undefined, eighths);
      if (!r.ok) throw new Error(r.reason);
      return { width: r.image.width, height: r.image.height, bytes: r.image.data.length };
    };
  },
  /** MozJPEG from @jsquash/jpeg (the decoder before), through its Emscripten factory; full size only. */
  async mozjpeg(eighths) {
    if (eighths !== 8) throw new Error("no scaled decode");
    const { compileWasm, importPackageModule, ensureImageDataClass } = await import("../src/engine/imaging/wasm-loader.ts");
    const [glue, wasm] = await Promise.all([importPackageModule("@jsquash/jpeg/codec/dec/mozjpeg_dec.js"), compileWasm("@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm")]);
    ensureImageDataClass();
    type Module = { decode(b: Uint8Array, keepOrientation: boolean): { width: number; height: number; data: Uint8ClampedArray } };
    const module = await (glue.default as (o: object) => Promise<Module>)({
      noInitialRun: true,
      instantiateWasm(imports: WebAssembly.Imports, done: (i: WebAssembly.Instance) => void) {
        const instance = new WebAssembly.Instance(wasm, imports);
        done(instance);
        return instance.exports;
      },
    });
    return async (b) => {
      const r = module.decode(b, false);
      return { width: r.width, height: r.height, bytes: r.data.length };
    };
  },
  /** imagescript's JPEG decoder (our CMYK path), full size only. */
  async imagescript(eighths) {
    if (eighths !== 8) throw new Error("no scaled decode");
    const { Image } = await import("imagescript");
    return async (b) => {
      const img = await Image.decode(b);
      return { width: img.width, height: img.height, bytes: img.bitmap.length };
    };
  },
  /** wasm-vips: libvips with libjpeg-turbo's shrink-on-load (1, 2, 4, 8), then an alpha band for RGBA. */
  async "wasm-vips"(eighths) {
    const shrink = 8 / eighths;
    if (![1, 2, 4, 8].includes(shrink)) throw new Error("shrink-on-load is 1, 2, 4 or 8");
    const Vips = fromCandidates("wasm-vips");
    const vips = await Vips({ dynamicLibraries: [] });
    return async (b) => {
      const img = vips.Image.jpegloadBuffer(b, { shrink, access: "sequential" });
      const rgba = img.bandjoin(255);
      const out = rgba.writeToMemory() as Uint8Array;
      const r = { width: rgba.width as number, height: rgba.height as number, bytes: out.length };
      img.delete();
      rgba.delete();
      return r;
    };
  },
  /** sharp on @img/sharp-wasm32 (the native package removed from `candidates`): a resize to the scale, which shrinks on load. */
  async "sharp-wasm32"(eighths) {
    // sharp loads a native build first when one is installed: only the WebAssembly one may be there.
    const has = (name: string) => existsSync(join(cfg.candidates ?? "", name));
    if (!has("@img/sharp-wasm32") || readdirSync(join(cfg.candidates ?? "", "@img")).some((d) => /^sharp-(linux|darwin|win32|libvips)/.test(d))) {
      throw new Error("needs @img/sharp-wasm32 and no native @img/sharp-* package in --candidates");
    }
    const sharp = fromCandidates("sharp");
    return async (b) => {
      const meta = await sharp(b).metadata();
      let p = sharp(b, { limitInputPixels: false });
      if (eighths !== 8) p = p.resize(Math.ceil((meta.width * eighths) / 8), Math.ceil((meta.height * eighths) / 8), { fastShrinkOnLoad: true, kernel: "nearest" });
      const { data, info } = await p.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      return { width: info.width, height: info.height, bytes: data.length };
    };
  },
};

const load = LIBRARIES[cfg.lib];
if (!load) throw new Error(`unknown library ${cfg.lib}: one of ${Object.keys(LIBRARIES).join(", ")}`);
const t0 = performance.now();
const decode = await load(cfg.eighths);
const startMs = performance.now() - t0;
const t1 = performance.now();
const first = await decode(bytes);
const firstMs = performance.now() - t1;
const times: number[] = [];
for (let i = 0; i < cfg.runs; i++) {
  const t = performance.now();
  await decode(bytes);
  times.push(performance.now() - t);
}
const cpu = process.cpuUsage();
console.log(
  JSON.stringify({
    ...cfg,
    width: first.width,
    height: first.height,
    outBytes: first.bytes,
    startMs,
    firstMs,
    medianMs: median(times),
    minMs: Math.min(...times),
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
  }),
);
process.exit(0);
