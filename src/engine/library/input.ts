// What `remove()` accepts, turned into bytes the engine may own. The engine moves its
// buffer to the worker thread (no second copy there), so it always gets a private copy:
// the caller's buffer is never detached, emptied or changed.
import { ImageError } from "./errors.ts";

export type ImageInput = Uint8Array | ArrayBuffer | Blob;

export async function ownBytes(input: ImageInput): Promise<Uint8Array> {
  let bytes: Uint8Array;
  // new Uint8Array(view) copies; a Buffer's slice() would be a view of the caller's memory.
  if (input instanceof Uint8Array) bytes = new Uint8Array(input);
  else if (input instanceof ArrayBuffer) bytes = new Uint8Array(input.slice(0));
  else if (typeof Blob !== "undefined" && input instanceof Blob) bytes = new Uint8Array(await input.arrayBuffer());
  else if (ArrayBuffer.isView(input)) {
    const view = input as ArrayBufferView;
    bytes = new Uint8Array(view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength));
  } else {
    throw new TypeError("input must be a Uint8Array (a Buffer is one), an ArrayBuffer or a Blob");
  }
  if (bytes.length === 0) throw new ImageError("The image is empty");
  return bytes;
}
