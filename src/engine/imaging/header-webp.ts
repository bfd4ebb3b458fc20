// WebP header: a RIFF container whose first chunk is "VP8 " (lossy), "VP8L"
// (lossless) or "VP8X" (extended: canvas size, flags, then EXIF/ALPH/... chunks).
// Layouts from the WebP container and bitstream specifications (RFC 9649).
import { imagingFailure, type ImagingFailure, type Orientation } from "./types.ts";
import type { ImageHeader } from "./header-types.ts";
import { readExifOrientation, withoutExifPrefix } from "./exif-orientation.ts";

const VP8X_ANIMATION = 0x02;
const VP8X_EXIF = 0x08;
const VP8X_ALPHA = 0x10;

const truncated = (): ImagingFailure => imagingFailure("The WebP file is truncated");

function fourCC(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]);
}

const u24le = (b: Uint8Array, at: number): number => b[at] | (b[at + 1] << 8) | (b[at + 2] << 16);

export function readWebpHeader(bytes: Uint8Array): ImageHeader | ImagingFailure {
  if (bytes.length < 20) return imagingFailure("The WebP file is truncated before its header ends");
  if (fourCC(bytes, 0) !== "RIFF" || fourCC(bytes, 8) !== "WEBP") return imagingFailure("Not a WebP file");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The RIFF size counts everything after the 8-byte RIFF header.
  const riffEnd = 8 + view.getUint32(4, true);
  if (riffEnd > bytes.length) return truncated();

  const first = fourCC(bytes, 12);
  const firstSize = view.getUint32(16, true);
  const data = 20;
  if (data + firstSize > riffEnd) return truncated();

  if (first === "VP8 ") {
    // frame tag(3): bit 0 clear for a key frame; start code 9D 01 2A; then 14-bit
    // width and height, each with 2 scaling bits on top that do not change the size.
    if (firstSize < 10) return truncated();
    if ((bytes[data] & 1) !== 0) return imagingFailure("The WebP file is corrupt: not a key frame");
    if (bytes[data + 3] !== 0x9d || bytes[data + 4] !== 0x01 || bytes[data + 5] !== 0x2a) {
      return imagingFailure("The WebP file is corrupt: bad VP8 start code");
    }
    const width = view.getUint16(data + 6, true) & 0x3fff;
    const height = view.getUint16(data + 8, true) & 0x3fff;
    return sized(width, height, 1, 3, false);
  }
  if (first === "VP8L") {
    // signature 0x2F, then 14 bits width-1, 14 bits height-1, 1 bit alpha, 3 bits version.
    if (firstSize < 5) return truncated();
    if (bytes[data] !== 0x2f) return imagingFailure("The WebP file is corrupt: bad VP8L signature");
    const bits = view.getUint32(data + 1, true);
    if (bits >>> 29 !== 0) return imagingFailure("The WebP file uses an unknown lossless version");
    const alpha = ((bits >>> 28) & 1) === 1;
    return sized((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1, 1, alpha ? 4 : 3, alpha);
  }
  if (first === "VP8X") {
    // flags(1) reserved(3) canvas width-1 (24 bits) canvas height-1 (24 bits)
    if (firstSize < 10) return truncated();
    const flags = bytes[data];
    if (flags & VP8X_ANIMATION) return imagingFailure("Animated WebP images are not supported");
    const width = u24le(bytes, data + 4) + 1;
    const height = u24le(bytes, data + 7) + 1;
    const alpha = (flags & VP8X_ALPHA) !== 0;
    const orientation = flags & VP8X_EXIF ? findExifOrientation(bytes, view, data + firstSize + (firstSize & 1), riffEnd) : 1;
    return sized(width, height, orientation, alpha ? 4 : 3, alpha);
  }
  return imagingFailure(`The WebP file starts with an unknown chunk "${first.replace(/[^\x20-\x7e]/g, "?")}"`);
}

function sized(
  width: number,
  height: number,
  orientation: Orientation,
  components: number,
  hasAlpha: boolean,
): ImageHeader | ImagingFailure {
  if (width === 0 || height === 0) return imagingFailure(`The WebP header declares an empty image (${width} x ${height})`);
  return { ok: true, format: "webp", width, height, orientation, components, hasAlpha };
}

/** Walks the chunks after VP8X for "EXIF". Chunks are padded to an even size. */
function findExifOrientation(bytes: Uint8Array, view: DataView, from: number, end: number): Orientation {
  for (let pos = from; pos + 8 <= end; ) {
    const size = view.getUint32(pos + 4, true);
    const start = pos + 8;
    if (start + size > end) return 1;
    if (fourCC(bytes, pos) === "EXIF") return readExifOrientation(withoutExifPrefix(bytes.subarray(start, start + size)));
    pos = start + size + (size & 1);
  }
  return 1;
}
