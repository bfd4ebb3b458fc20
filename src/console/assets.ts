// The landing page's before/after pictures, files in ./assets (how they were made and
// their licence: ./assets/README.md). Read once, when first asked for.
import { readFileSync } from "node:fs";

export interface Asset {
  path: string;
  file: string;
  type: string;
  width: number;
  height: number;
}

/** The photo as shown (JPEG of the original) and our engine's cut-out of it (preview size). */
export const SHOWCASE = {
  original: { path: "/console/static/chelsea.jpg", file: "chelsea.jpg", type: "image/jpeg", width: 451, height: 300 },
  cutout: { path: "/console/static/chelsea-cutout.png", file: "chelsea-cutout.png", type: "image/png", width: 451, height: 300 },
} satisfies Record<string, Asset>;

const cache = new Map<string, Uint8Array>();

export function assetBytes(a: Asset): Uint8Array {
  let bytes = cache.get(a.file);
  if (!bytes) {
    bytes = new Uint8Array(readFileSync(new URL(`./assets/${a.file}`, import.meta.url)));
    cache.set(a.file, bytes);
  }
  return bytes;
}
