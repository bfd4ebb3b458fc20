// A model file read once per session and checked by sha256 on the very bytes the runtime
// loads: the hash runs on WebCrypto's thread pool while the session is created from the
// same bytes, so the check costs no time on the start-up path, and what was checked is what
// runs. Start-up used to hash the file on the calling thread and then read it again here.
// Once the session holds its own copy, the bytes are freed at once (drop).
import { readFile } from "node:fs/promises";
import { InferenceError, messageOf } from "./errors.ts";

/** In the message of the error a damaged model file gives; the library repairs on it (open-engine.ts). */
export const MODEL_MISMATCH = "does not match its manifest sha256";

export const isModelMismatch = (err: unknown): boolean => err instanceof Error && err.message.includes(MODEL_MISMATCH);

export interface ModelBytes {
  bytes: Uint8Array;
  /** Resolves when the bytes hash to the manifest's sha256; rejects (model_unavailable) otherwise. */
  verified: Promise<void>;
  /** Once the runtime holds its own copy: gives the bytes' memory back now (see dropBytes). `bytes` is empty after. */
  drop(): void;
}

/**
 * Frees a buffer now rather than at its thread's next full collection, which a worker that
 * allocates little may not have for the rest of its life (the 44 MB file stayed resident
 * through a whole one-image CLI run, beside the runtime's heap at its peak). Moving the
 * buffer into a message to a closed port detaches it here, and the message, dropped
 * undelivered, takes the memory with it. A buffer that cannot move is left to the collector.
 */
function dropBytes(bytes: Uint8Array): void {
  const { port1, port2 } = new MessageChannel();
  port2.close();
  try {
    port1.postMessage(null, [bytes.buffer as ArrayBuffer]);
  } catch {
    // not transferable (a pooled or shared buffer): the collector frees it
  } finally {
    port1.close();
  }
}

/** `entry.sha256` absent (a model described by a card, not a manifest entry): nothing to check the bytes against. */
export async function readModelBytes(path: string, entry: { sha256?: string }): Promise<ModelBytes> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path); // a Buffer is a Uint8Array: no second copy
  } catch (err) {
    throw new InferenceError("model_unavailable", `cannot read model ${path}: ${messageOf(err)}`, { cause: err });
  }
  const drop = () => dropBytes(bytes);
  if (entry.sha256 === undefined) return { bytes, verified: Promise.resolve(), drop };
  // WebCrypto copies the bytes when the call is made, so dropping them later is safe.
  const verified = crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>).then((digest) => {
    const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    if (hex !== entry.sha256) {
      throw new InferenceError("model_unavailable", `model file ${path} (sha256 ${hex}) ${MODEL_MISMATCH} ${entry.sha256}; run pixeldrop assemble`);
    }
  });
  verified.catch(() => {}); // awaited by the caller after the session starts
  return { bytes, verified, drop };
}
