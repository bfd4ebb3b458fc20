// Benchmark inputs made from the openly licensed fixture photo at run time (nothing
// large is committed): a 12 MP JPEG and a ~0.4 MP JPEG, both upscaled from rocket.jpg.
import { readFile } from "node:fs/promises";
import { Image } from "imagescript";
import { decodeImage, resizeRGBA } from "../src/engine/imaging/index.ts";

export interface BenchInput {
  name: string;
  bytes: Uint8Array;
  width: number;
  height: number;
}

/** The fixture photo upscaled (or shrunk) to `width` × `height`, as a quality-90 JPEG. */
export async function jpegAt(photo: Uint8Array, width: number, height: number, name: string): Promise<BenchInput> {
  const decoded = await decodeImage(photo);
  if (!decoded.ok) throw new Error(decoded.title);
  const big = resizeRGBA(decoded.image, width, height);
  const img = new Image(width, height);
  img.bitmap.set(big.data);
  const bytes = await img.encodeJPEG(90);
  return { name, bytes, width, height };
}

/** The openly licensed photo the bench inputs are made from. */
export const benchPhoto = async (): Promise<Uint8Array> => new Uint8Array(await readFile(new URL("../test/fixtures/photos/rocket.jpg", import.meta.url)));

export async function benchInputs(): Promise<BenchInput[]> {
  const photo = await benchPhoto();
  // 4242 x 2828 = 11,996,376 px: just under the 12 MP limit, the photo's 3:2 aspect.
  return [await jpegAt(photo, 4242, 2828, "12 MP JPEG"), await jpegAt(photo, 774, 516, "0.4 MP JPEG")];
}
