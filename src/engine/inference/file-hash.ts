// The sha256 of a file, read in 4 MiB pieces (model files are 44-88 MB). One helper for
// the manifest's checks and for assembling the assets; it has no dependencies so the
// container build can run the assembler with only its own files copied in.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 4 * 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
