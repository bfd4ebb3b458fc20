// Finds and compiles the WASM codec files that ship inside npm packages. In browsers
// the codec glue fetches its .wasm by URL; Node's fetch cannot read file: URLs, so
// local files are read with node:fs, which Node and Deno both provide. Nothing here
// runs at import time.

/** The file: (or other) URL of a file inside an installed package. */
export function packageFileUrl(specifier: string): URL {
  return new URL(import.meta.resolve(specifier));
}

async function readBytes(url: URL): Promise<Uint8Array<ArrayBuffer>> {
  if (url.protocol === "file:") {
    const fs = await import("node:fs/promises");
    const buf = await fs.readFile(url);
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength) as Uint8Array<ArrayBuffer>;
  }
  const res = await fetch(url);
  if (!res.ok) throw new Error(`Could not load ${url.href}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** Reads and compiles a .wasm file from a package, e.g. "@jsquash/webp/codec/dec/webp_dec.wasm". */
export async function compileWasm(specifier: string): Promise<WebAssembly.Module> {
  return WebAssembly.compile(await readBytes(packageFileUrl(specifier)));
}

/** Imports a package's JS module by specifier without the type checker chasing its types. */
export async function importPackageModule(specifier: string): Promise<Record<string, unknown>> {
  return (await import(packageFileUrl(specifier).href)) as Record<string, unknown>;
}

/**
 * The Squoosh codecs build their results with `new ImageData(...)`, a browser class.
 * Their glue adds a stand-in under Node; this covers any other runtime without one.
 */
export function ensureImageDataClass(): void {
  const g = globalThis as { ImageData?: unknown };
  if (g.ImageData !== undefined) return;
  g.ImageData = class ImageDataStandIn {
    constructor(
      readonly data: Uint8ClampedArray,
      readonly width: number,
      readonly height: number,
    ) {}
  };
}
