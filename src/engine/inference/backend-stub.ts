// The stub backend: no model, a fixed centred ellipse after a configurable delay. It
// exists for load tests of the queue, limits and billing, where real inference (seconds
// per image) would measure the CPU rather than the service. Never a default.
import { setTimeout as sleep } from "node:timers/promises";

/** A centred ellipse covering about 70% x 84% of the frame, with a two-pixel soft edge. */
export function ellipseMask(width: number, height: number): Uint8Array {
  const mask = new Uint8Array(width * height);
  const cx = (width - 1) / 2;
  const cy = (height - 1) / 2;
  const a = Math.max(1, width * 0.35);
  const b = Math.max(1, height * 0.42);
  const edge = 2 / Math.min(a, b); // two pixels, in units of the radius
  for (let y = 0; y < height; y++) {
    const dy = (y - cy) / b;
    for (let x = 0; x < width; x++) {
      const dx = (x - cx) / a;
      const t = (1 - Math.sqrt(dx * dx + dy * dy)) / edge + 0.5;
      mask[y * width + x] = t >= 1 ? 255 : t > 0 ? Math.round(t * 255) : 0;
    }
  }
  return mask;
}

export function createStubRunner(width: number, height: number, delayMs: number) {
  const template = ellipseMask(width, height);
  return {
    async run(): Promise<Uint8Array> {
      // A timer, not a busy loop: load tests want the latency, not a hot core.
      if (delayMs > 0) await sleep(delayMs);
      return template.slice();
    },
  };
}
