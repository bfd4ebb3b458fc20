// channels=alpha: the mask alone as an 8-bit greyscale PNG (colour type 0), through the
// platform's CompressionStream("deflate"), which emits the zlib stream PNG's IDAT wants
// and runs the same on Node, Deno and in workers. (The RGBA writer, png-rgba.ts, needs
// deflate in segments on several threads, which only node:zlib's flush modes give.)
import { concatBytes } from "./bytes.ts";
import { chunk, headerData, PNG_SIGNATURE } from "./png-chunks.ts";

// The rows go to the compressor in one write, read back as they come. Not through a Blob:
// Node 20 copies the bytes into one and streams them back in small pieces, which made a
// 12 MP mask's deflate 117-192 ms instead of 21-25 ms.
async function deflate(raw: Uint8Array): Promise<Uint8Array> {
  const compressor = new CompressionStream("deflate");
  const writer = compressor.writable.getWriter();
  const [out] = await Promise.all([
    new Response(compressor.readable).arrayBuffer(),
    writer.write(raw as Uint8Array<ArrayBuffer>).then(() => writer.close()),
  ]);
  return new Uint8Array(out);
}

/** `grey` holds one byte per pixel, row by row. */
export async function encodeGreyPng(width: number, height: number, grey: Uint8Array): Promise<Uint8Array> {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || grey.length !== width * height) {
    throw new RangeError(`encodeGreyPng: ${grey.length} bytes for ${width} x ${height}`);
  }
  // Filter type "Up" on every row after the first: masks are smooth, so it compresses well.
  const raw = new Uint8Array(height * (width + 1));
  for (let y = 0; y < height; y++) {
    const row = y * (width + 1);
    const src = y * width;
    raw[row] = y === 0 ? 0 : 2;
    for (let x = 0; x < width; x++) raw[row + 1 + x] = y === 0 ? grey[src + x]! : (grey[src + x]! - grey[src - width + x]!) & 255;
  }
  return concatBytes(PNG_SIGNATURE, chunk("IHDR", headerData(width, height, 0)), chunk("IDAT", await deflate(raw)), chunk("IEND", new Uint8Array(0)));
}
