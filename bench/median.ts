// The median every benchmark reports: the middle value, or the mean of the two middle
// values when the count is even. One definition, so two tables never disagree on it.
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new RangeError("median of no values");
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
