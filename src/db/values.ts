// Text-to-JS conversions shared by both drivers, so a row looks the same whichever
// database produced it. node-postgres returns int8 and numeric as strings and PGlite
// returns int8 as a (possibly imprecise) number; both are replaced by these.

export const OID_INT8 = 20;
export const OID_NUMERIC = 1700;
export const OID_TIMESTAMPTZ = 1184;

/** int8 text -> number; refuses values a double cannot hold exactly. */
export function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`bigint value ${text} is outside the safe integer range`);
  return n;
}

/** numeric text -> number. Sums of bigint columns arrive as numeric; money is whole won. */
export function parseNumeric(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n)) throw new RangeError(`numeric value ${text} is not finite`);
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) {
    throw new RangeError(`numeric value ${text} is outside the safe integer range`);
  }
  return n;
}

/** timestamptz text (e.g. "2026-11-01 00:00:00.123+00") -> ms since the epoch. */
export function parseTimestamptz(text: string): number {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new RangeError(`cannot read timestamp ${text}`);
  return ms;
}
