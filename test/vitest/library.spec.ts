// The library as a vitest user meets it: imported by package name, the real model on a
// real photo, the one-shot removeBackground, ImageError, abort. The last remover here (on
// the tiny model of IS-Net's shape, test/support/tiny-onnx.ts, passed by path) is never
// disposed on purpose: vitest must still finish (its run would time out otherwise).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createRemover, ImageError, removeBackground } from "pixeldrop";
import { decodeImage } from "../../src/engine/imaging/index.ts";
import { maskProblems, PHOTO_CASES } from "../support/photo-masks.ts";
import { writeTinyModel } from "../support/tiny-onnx.ts";

const photo = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url));

describe("pixeldrop under vitest", () => {
  it("removeBackground cuts out a real photo: subject opaque, background clear", async () => {
    const c = PHOTO_CASES[2]!; // rocket
    const cut = await removeBackground(new Blob([photo(c.name)]), { size: "full", backend: "wasm" });
    expect([cut.width, cut.height]).toEqual([640, 427]);
    const decoded = await decodeImage(cut.png);
    if (!decoded.ok) throw new Error(decoded.title);
    expect(maskProblems(decoded.image, c)).toEqual([]);
  });

  it("junk is an ImageError, an aborted signal an AbortError, and the remover keeps working (left undisposed)", async () => {
    const tiny = writeTinyModel();
    const remover = await createRemover({ model: tiny.path, backend: "wasm" });
    await expect(remover.remove(new Uint8Array([1, 2, 3]))).rejects.toBeInstanceOf(ImageError);
    await expect(remover.remove(photo("photos/chelsea.png"), { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
    const cut = await remover.remove(new Uint8Array(photo("photos/chelsea.png")).buffer, { size: "preview" });
    expect(cut.width * cut.height).toBeLessThanOrEqual(250_000);
    tiny.remove(); // the session holds the model: its file is no longer needed
  });
});
