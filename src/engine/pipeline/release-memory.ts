// What a pool worker gives back after a large job, and when. A 12 MP job leaves its
// buffers behind as garbage: the decoded pixels and the cut-out in shared memory (which
// the band helpers saw too) and the PNG's pieces. An idle worker allocates nothing, so V8
// does not collect them, and the JPEG decoder's heap (grown to the image's size) and the
// band arena (sized to the job) are kept for the next job on purpose: after one paid 12 MP
// call they held about 140 MiB of a 1.1 GiB service (docs/DEPLOY.md). Where the process
// exposes V8's gc() (`node --expose-gc`, as the image runs), after a large job the pool's
// next message to the worker decides (pipeline-worker.ts):
//
// - a job already queued for it: the worker first collects the last job's garbage, in its
//   own thread and every band helper (a collection of heaps of ~10 MB), and keeps the rest,
//   so jobs that follow each other never pay for fresh memory;
// - "idle" (the pool had no job for it when it answered): it also drops the decoder
//   instances, the band arena and the session's input tensor (12 MB), then collects. The
//   memory is back as the answer goes out, not a while later; the next large job pays for
//   fresh memory (on this VM ~0.2 s of CPU for a fresh decoder heap at 12 MP,
//   docs/DECISIONS.md).
//
// The service's engine also collects its calling thread (the HTTP server's) once idle
// after a large job (engine.ts, collectCallingThread); the library's leaves its caller's
// heap alone.
//
// Without gc() nothing is dropped: garbage that nothing collects would only sit beside
// the next job's fresh memory, so keeping the arena and the instances is cheaper there.
import { readImageHeader } from "../imaging/header.ts";

/**
 * Jobs whose image is over this many pixels (4 MP, a third of the largest accepted) are
 * followed by a collection and, when idle, a release. Below it, what is kept (the arena and
 * the decoder heap of a job this size, about 11 bytes a pixel: under 45 MB) stays.
 */
export const RELEASE_AFTER_PIXELS = 4_000_000;

/** How long the service's calling thread waits, with no job, before it collects after a large one (engine.ts). */
export const RELEASE_WHEN_IDLE_MS = 1000;

/** V8's gc() where this thread can call it (`--expose-gc`), else undefined. */
export function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === "function" ? (gc as () => void) : undefined;
}

/** Whether a job on these input bytes is followed by a collection and release (the header alone is read). */
export function releasesAfter(image: Uint8Array): boolean {
  if (!exposedGc()) return false;
  const header = readImageHeader(image);
  return header.ok && header.width * header.height > RELEASE_AFTER_PIXELS;
}
