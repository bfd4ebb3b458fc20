// Run by deno.test.ts under Deno (not by Node's test runner): decodes a few fixtures
// and encodes a PNG through the public API, printing one JSON line of results.
import { decodeImage, encodePng, readImageHeader } from "../../src/engine/imaging/index.ts";

declare const Deno: { readFile(path: URL): Promise<Uint8Array> };

const results: Record<string, string> = {};
for (const name of ["jpeg-baseline.jpg", "jpeg-cmyk-adobe.jpg", "png-palette-trns.png", "webp-alpha.webp", "png-rgba-truncated.png"]) {
  const r = await decodeImage(await Deno.readFile(new URL(`../fixtures/images/${name}`, import.meta.url)));
  results[name] = r.ok ? `${r.image.width}x${r.image.height}` : "failure";
}
const png = await encodePng({ width: 2, height: 1, data: new Uint8ClampedArray([1, 2, 3, 4, 5, 6, 7, 8]) });
const h = readImageHeader(png);
results.encoded = h.ok ? `${h.width}x${h.height}` : "failure";
console.log(JSON.stringify(results));
