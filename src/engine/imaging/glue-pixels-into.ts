// Where the Squoosh decoders' pixels land. Their glue (embind) returns the pixels as
// `new Uint8ClampedArray(<view of the WASM heap>)`: a new 48 MB array at 12 MP, whose
// pages the kernel faults in on every call, which the pipeline then copied again into
// the memory its helper threads share. The glue finds that constructor by name on
// globalThis and keeps what it found for the life of the instance. While a decode runs
// under withPixelsInto, the name resolves to PixelsInto, which copies the heap's view
// into memory the caller chose: one copy, into pages already in use. Outside a call the
// stand-in behaves as the real constructor, so an instance that keeps it is unchanged.
// A glue that finds the constructor some other way returns a plain array instead, which
// the caller then copies (codec-squoosh.ts).

/** n bytes for a decoder's RGBA pixels, e.g. shared memory (row-bands.ts). */
export type PixelMemory = (n: number) => Uint8Array;

// The real constructor, captured before any call can replace the global.
const Clamped = Uint8ClampedArray;

/** What PixelsInto made during one withPixelsInto: the pixels, and the array it gave the glue for them. */
export interface MadePixels {
  pixels: Uint8ClampedArray;
  returned: Uint8ClampedArray;
}

let target: PixelMemory | undefined;
let made: MadePixels | undefined;
let emptyOk = false;

// The glue hands what it gets from PixelsInto to `new ImageData(array, w, h)` through an
// embind caller that keeps the arguments of its last call in a closure: given the pixels,
// it held the last image (48 MB at 12 MP, memory of its own on a job that outgrew the
// band arena) alive in an idle worker until the next decode. Where ImageData is a
// stand-in that only stores its arguments (the glue's own, or ensureImageDataClass's),
// the glue gets an empty array instead and the caller takes the pixels from `made`; a
// real ImageData, which checks the length, gets the pixels as before.
function acceptsEmpty(): boolean {
  const I = (globalThis as { ImageData?: new (d: Uint8ClampedArray, w: number, h: number) => { data: unknown } }).ImageData;
  if (typeof I !== "function") return false;
  try {
    const probe = new Clamped(0);
    return new I(probe, 1, 1).data === probe;
  } catch {
    return false;
  }
}

// A function rather than a class: `new` of a function that returns an object yields that
// object, which is how the stand-in hands back memory it did not allocate.
function PixelsInto(...args: unknown[]): Uint8ClampedArray {
  const [source] = args;
  if (args.length !== 1 || !ArrayBuffer.isView(source)) {
    return new (Clamped as new (...a: unknown[]) => Uint8ClampedArray)(...args);
  }
  const view = source as Uint8Array;
  const bytes = target ? target(view.length) : new Uint8Array(view.length);
  if (bytes.length !== view.length) throw new RangeError(`PixelMemory gave ${bytes.length} bytes for ${view.length}`);
  bytes.set(view);
  const pixels = new Clamped(bytes.buffer, bytes.byteOffset, bytes.length);
  made = { pixels, returned: emptyOk ? new Clamped(0) : pixels };
  return made.returned;
}

/**
 * Runs `decode` (synchronous, so no other code of this thread sees the swapped global) with
 * its pixels going to `into`. `made`: what the stand-in made, if the glue called it; the
 * caller looks for `made.returned` in the decoder's result and takes `made.pixels`. Nothing
 * of it is kept here after the call.
 */
export function withPixelsInto<T>(into: PixelMemory | undefined, decode: () => T): { value: T; made: MadePixels | undefined } {
  const g = globalThis as { Uint8ClampedArray: unknown };
  target = into;
  made = undefined;
  emptyOk = acceptsEmpty();
  g.Uint8ClampedArray = PixelsInto;
  try {
    const value = decode();
    return { value, made };
  } finally {
    g.Uint8ClampedArray = Clamped;
    target = undefined;
    made = undefined;
  }
}
