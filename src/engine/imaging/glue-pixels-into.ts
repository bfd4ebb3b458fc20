// Where the Squoosh decoders' pixels land. Their glue (embind) returns the pixels as
// `new Uint8ClampedArray(<view of the WASM heap>)`: a new 48 MB array at 12 MP, whose
// pages the kernel faults in on every call, which the pipeline then copied again into
// the memory its helper threads share. The glue finds that constructor by name on
// globalThis and keeps what it found for the life of the instance. While a decode runs
// under withPixelsInto, the name resolves to PixelsInto, which copies the heap's view
// into memory the caller chose: one copy, into pages already in use. Outside a call the
// stand-in behaves as the real constructor, so an instance that keeps it is unchanged.
// A glue that finds the constructor some other way returns a plain array instead;
// madeHere() tells the caller, who then copies (codec-squoosh.ts).

/** n bytes for a decoder's RGBA pixels, e.g. shared memory (row-bands.ts). */
export type PixelMemory = (n: number) => Uint8Array;

// The real constructor, captured before any call can replace the global.
const Clamped = Uint8ClampedArray;
let target: PixelMemory | undefined;
let lastMade: Uint8ClampedArray | undefined;

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
  lastMade = new Clamped(bytes.buffer, bytes.byteOffset, bytes.length);
  return lastMade;
}

/** Runs `decode` (synchronous, so no other code of this thread sees the swapped global) with its pixels going to `into`. */
export function withPixelsInto<T>(into: PixelMemory | undefined, decode: () => T): T {
  const g = globalThis as { Uint8ClampedArray: unknown };
  target = into;
  lastMade = undefined;
  g.Uint8ClampedArray = PixelsInto;
  try {
    return decode();
  } finally {
    g.Uint8ClampedArray = Clamped;
    target = undefined;
  }
}

/** Whether `data` is the array PixelsInto made during the last withPixelsInto. */
export function madeHere(data: Uint8ClampedArray): boolean {
  return data === lastMade;
}
