// Reads a Prometheus text exposition into sample → value, keyed the way it is printed
// (`name{label="v",...}`), so tests can compare before/after values of one series.
export type Samples = Map<string, number>;

export function parseProm(text: string): Samples {
  const out: Samples = new Map();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const cut = line.lastIndexOf(" ");
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return out;
}

/** A series' value, 0 when it does not exist (yet). */
export function value(s: Samples, series: string): number {
  return s.get(series) ?? 0;
}

/** The increase of every series named, from `before` to `after`. */
export function delta(before: Samples, after: Samples, series: string): number {
  return value(after, series) - value(before, series);
}
