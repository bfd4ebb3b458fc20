// Where the subject and the background are in the test photos (fractions of the size),
// and how opaque a spot of a decoded cut-out is. Shared by the pipeline's real-model test
// and the library's tests in Node, vitest and Deno, so all check the same mask the same way.

export interface PhotoCase {
  name: string;
  subject: [number, number][];
  background: [number, number][];
}

export const PHOTO_CASES: PhotoCase[] = [
  // Portrait: face and suit opaque; the plain studio backdrop transparent.
  { name: "photos/astronaut.png", subject: [[0.45, 0.25], [0.4, 0.7]], background: [[0.05, 0.05], [0.95, 0.05], [0.9, 0.35]] },
  // Cat: its face opaque; the blurred room on the right transparent.
  { name: "photos/chelsea.png", subject: [[0.4, 0.5], [0.6, 0.3]], background: [[0.97, 0.15], [0.96, 0.5]] },
  // Launch pad at night: the rocket opaque, the dark sky transparent.
  { name: "photos/rocket.jpg", subject: [[0.5, 0.5], [0.5, 0.75]], background: [[0.3, 0.1], [0.7, 0.1], [0.85, 0.3]] },
];

/** Mean alpha of a 9x9 window around a point given as fractions of the size. */
export function alphaAt(img: { width: number; height: number; data: Uint8ClampedArray }, fx: number, fy: number): number {
  const cx = Math.round(fx * (img.width - 1));
  const cy = Math.round(fy * (img.height - 1));
  let sum = 0;
  let n = 0;
  for (let y = Math.max(0, cy - 4); y <= Math.min(img.height - 1, cy + 4); y++) {
    for (let x = Math.max(0, cx - 4); x <= Math.min(img.width - 1, cx + 4); x++) {
      sum += img.data[(y * img.width + x) * 4 + 3];
      n++;
    }
  }
  return sum / n;
}

/** The failures of a cut-out against its case: opaque subject (> 200), clear background (< 30). */
export function maskProblems(img: { width: number; height: number; data: Uint8ClampedArray }, c: PhotoCase): string[] {
  const problems: string[] = [];
  for (const [x, y] of c.subject) {
    const a = alphaAt(img, x, y);
    if (!(a > 200)) problems.push(`subject at ${x},${y} has alpha ${a}`);
  }
  for (const [x, y] of c.background) {
    const a = alphaAt(img, x, y);
    if (!(a < 30)) problems.push(`background at ${x},${y} has alpha ${a}`);
  }
  return problems;
}
