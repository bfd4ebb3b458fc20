// JPEG header: walks the marker segments up to the first frame header (SOFn) for the
// dimensions, picking up the EXIF orientation from APP1 on the way. Pixel data is
// never touched.
import { imagingFailure, type ImagingFailure, type Orientation } from "./types.ts";
import type { ImageHeader } from "./header-types.ts";
import { readExifOrientation } from "./exif-orientation.ts";

const SOI = 0xd8;
const EOI = 0xd9;
const SOS = 0xda;
const APP1 = 0xe1;
const TEM = 0x01;

/** SOF0-SOF15 minus DHT (C4), JPG (C8) and DAC (CC), which share the range. */
function isFrameHeader(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/** Markers that stand alone, without a length field. */
function isStandalone(marker: number): boolean {
  return marker === SOI || marker === TEM || (marker >= 0xd0 && marker <= 0xd7);
}

const truncated = (): ImagingFailure => imagingFailure("The JPEG file is truncated before its frame header");

function isExifApp1(bytes: Uint8Array, start: number, end: number): boolean {
  // "Exif\0\0"
  return (
    end - start >= 6 &&
    bytes[start] === 0x45 && bytes[start + 1] === 0x78 && bytes[start + 2] === 0x69 &&
    bytes[start + 3] === 0x66 && bytes[start + 4] === 0 && bytes[start + 5] === 0
  );
}

export function readJpegHeader(bytes: Uint8Array): ImageHeader | ImagingFailure {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== SOI) return imagingFailure("Not a JPEG file");
  let orientation: Orientation = 1;
  let seenExif = false;
  let pos = 2;
  for (;;) {
    if (pos >= bytes.length) return truncated();
    if (bytes[pos] !== 0xff) return imagingFailure("The JPEG file is corrupt: expected a marker");
    // Any number of 0xFF fill bytes may precede the marker code.
    while (pos < bytes.length && bytes[pos] === 0xff) pos++;
    if (pos >= bytes.length) return truncated();
    const marker = bytes[pos++];
    if (isStandalone(marker)) continue;
    if (marker === EOI) return imagingFailure("The JPEG file ends before its frame header");
    if (marker === SOS) return imagingFailure("The JPEG file is corrupt: image data before the frame header");
    if (pos + 2 > bytes.length) return truncated();
    const length = (bytes[pos] << 8) | bytes[pos + 1];
    if (length < 2) return imagingFailure("The JPEG file is corrupt: bad segment length");
    const start = pos + 2;
    const end = pos + length;
    if (end > bytes.length) return truncated();
    if (marker === APP1 && !seenExif && isExifApp1(bytes, start, end)) {
      seenExif = true; // the first EXIF block wins, as in browsers
      orientation = readExifOrientation(bytes.subarray(start + 6, end));
    } else if (isFrameHeader(marker)) {
      // precision(1) height(2) width(2) components(1) ...
      if (length < 8) return imagingFailure("The JPEG frame header is too short");
      const height = (bytes[start + 1] << 8) | bytes[start + 2];
      const width = (bytes[start + 3] << 8) | bytes[start + 4];
      const components = bytes[start + 5];
      if (width === 0 || height === 0) {
        return imagingFailure(`The JPEG frame header declares an empty image (${width} x ${height})`);
      }
      if (components !== 1 && components !== 3 && components !== 4) {
        return imagingFailure(`JPEG images with ${components} colour components are not supported`);
      }
      return { ok: true, format: "jpeg", width, height, orientation, components, hasAlpha: false };
    }
    pos = end;
  }
}

/**
 * Counts start-of-scan markers. Entropy-coded data escapes 0xFF as FF 00, so FF DA
 * only occurs as a real marker. Used to refuse progressive files with absurd scan
 * counts, which cost decode time without adding pixels.
 */
export function countJpegScans(bytes: Uint8Array): number {
  let scans = 0;
  for (let i = bytes.indexOf(0xff); i >= 0 && i + 1 < bytes.length; i = bytes.indexOf(0xff, i + 1)) {
    if (bytes[i + 1] === SOS) scans++;
  }
  return scans;
}
