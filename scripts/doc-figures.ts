// The figures a doc states: a number (or a range of two) with a unit of measurement,
// e.g. "116.5 ms", "2,793–2,823 ms", "0.74 ×", "978 MiB". Used by the check that each
// figure is stated in one doc only (the others point to it), so a number that changes is
// changed in one place.
const NUMBER = String.raw`\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`;
const UNIT = String.raw`ms|µs|s|MiB|GiB|KiB|MB|GB|KB|kB|×|%|/s|per s|images/min|pictures a second`;
const FIGURE = new RegExp(String.raw`(?<![\w.,/–-])((?:${NUMBER})(?:\s?[–-]\s?(?:${NUMBER}))?)\s?(${UNIT})(?![\w/])(?!\s?\d)`, "g");

export interface Figure {
  /** The figure as compared: its number(s) without spaces, one space, its unit. */
  key: string;
  line: number;
}

/** Figures that say too little to be a measurement (a whole second, a round share). */
function isMeasurement(numbers: string, unit: string): boolean {
  const digits = numbers.replace(/[^0-9]/g, "");
  if (numbers.includes("–") || numbers.includes("-")) return true;
  if (numbers.includes(".")) return true;
  // Round settings ("30 s", "140 s", "500 ms", "32 KiB") are limits and defaults,
  // quoted where they matter; a measured figure is rarely a multiple of ten or a power of two.
  if (/^[1-9]\d?0+$/.test(digits) || /^[1-9]$/.test(digits)) return false;
  // Sizes in powers of two (buffers, caps) are settings too.
  if (/^(?:16|32|64|128|256|512|1024|2048|4096)$/.test(digits) && unit !== "%") return false;
  return unit !== "%" || digits.length > 1;
}

/** "429s", "503s": HTTP statuses in the plural (no space, a status code), not seconds. */
function isStatusPlural(matched: string): boolean {
  return /^[1-5]\d\ds$/.test(matched);
}

export function figuresIn(text: string): Figure[] {
  const out: Figure[] = [];
  const lines = text.split("\n");
  let fenced = false;
  lines.forEach((line, index) => {
    if (line.trimStart().startsWith("```")) fenced = !fenced;
    if (fenced) return; // commands and their flags, not statements
    for (const match of line.matchAll(FIGURE)) {
      const numbers = match[1].replace(/\s/g, "").replace("-", "–");
      if (isStatusPlural(match[0])) continue;
      if (!isMeasurement(numbers, match[2])) continue;
      out.push({ key: `${numbers} ${match[2]}`, line: index + 1 });
    }
  });
  return out;
}
