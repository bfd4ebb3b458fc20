// What a pool worker gives back after a large job, and when. A 12 MP job leaves its
// buffers behind as garbage: the decoded pixels and the cut-out in shared memory (which
// the band helpers saw too), the PNG's pieces, and the JPEG decoder's heap, grown to the
// image's size and kept for the next one. An idle worker allocates nothing, so V8 does not
// collect them: after one paid 12 MP call they held about 140 MiB of a 1.1 GiB service
// until the next job (docs/DEPLOY.md). Where the process exposes V8's gc() (`node
// --expose-gc`, as the image runs), the worker drops what it would keep for the next
// large job (the band arena, the decoders' instances) and collects in every thread that
// held the job's buffers, once the answer is sent. The next large job then pays the page
// faults of fresh memory: tens of milliseconds on a job of seconds.
//
// Without gc() nothing is dropped: garbage that nothing collects would only sit beside
// the next job's fresh memory, so keeping the arena and the instances is cheaper there.
import { readImageHeader } from "../imaging/header.ts";

/**
 * Jobs whose image is over this many pixels (4 MP, a third of the largest accepted) are
 * followed by a release. Below it, what is kept (the arena and the decoder heap of a job
 * this size, about 11 bytes a pixel: under 45 MB) stays for the next job.
 */
export const RELEASE_AFTER_PIXELS = 4_000_000;

/** V8's gc() where this thread can call it (`--expose-gc`), else undefined. */
export function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === "function" ? (gc as () => void) : undefined;
}

/** Whether a job on these input bytes is followed by a release (the header alone is read). */
export function releasesAfter(image: Uint8Array): boolean {
  if (!exposedGc()) return false;
  const header = readImageHeader(image);
  return header.ok && header.width * header.height > RELEASE_AFTER_PIXELS;
}
