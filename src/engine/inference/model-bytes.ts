// A model file read once per session and checked by sha256 on the very bytes the runtime
// loads: the hash runs on WebCrypto's thread pool while the session is created from the
// same bytes, so the check costs no time on the start-up path, and what was checked is what
// runs. Start-up used to hash the file on the calling thread and then read it again here.
import { readFile } from "node:fs/promises";
import { InferenceError, messageOf } from "./errors.ts";

/** In the message of the error a damaged model file gives; the library repairs on it (open-engine.ts). */
export const MODEL_MISMATCH = "does not match its manifest sha256";

export const isModelMismatch = (err: unknown): boolean => err instanceof Error && err.message.includes(MODEL_MISMATCH);

export interface ModelBytes {
  bytes: Uint8Array;
  /** Resolves when the bytes hash to the manifest's sha256; rejects (model_unavailable) otherwise. */
  verified: Promise<void>;
}

/** `entry.sha256` absent (a model described by a card, not a manifest entry): nothing to check the bytes against. */
export async function readModelBytes(path: string, entry: { sha256?: string }): Promise<ModelBytes> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path); // a Buffer is a Uint8Array: no second copy
  } catch (err) {
    throw new InferenceError("model_unavailable", `cannot read model ${path}: ${messageOf(err)}`, { cause: err });
  }
  if (entry.sha256 === undefined) return { bytes, verified: Promise.resolve() };
  const verified = crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>).then((digest) => {
    const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    if (hex !== entry.sha256) {
      throw new InferenceError("model_unavailable", `model file ${path} (sha256 ${hex}) ${MODEL_MISMATCH} ${entry.sha256}; run pixeldrop assemble`);
    }
  });
  verified.catch(() => {}); // awaited by the caller after the session starts
  return { bytes, verified };
}
