// Calendar arithmetic in Korea Standard Time (Asia/Seoul). KST is UTC+9 all year
// (no daylight saving since 1988), so a fixed offset is exact and needs no tz data.
// Daily limits reset at 00:00 KST and monthly ones on the 1st at 00:00 KST.

const KST_OFFSET_MS = 9 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** "YYYY-MM-DD" of the KST calendar day containing `ms`. */
export function kstDay(ms: number): string {
  return new Date(ms + KST_OFFSET_MS).toISOString().slice(0, 10);
}

/** "YYYY-MM" of the KST calendar month containing `ms`. */
export function kstMonth(ms: number): string {
  return new Date(ms + KST_OFFSET_MS).toISOString().slice(0, 7);
}

/** Epoch ms of the next 00:00 KST strictly after `ms`. */
export function nextKstMidnight(ms: number): number {
  const shifted = ms + KST_OFFSET_MS;
  return (Math.floor(shifted / DAY_MS) + 1) * DAY_MS - KST_OFFSET_MS;
}

/** Epoch ms of the next 1st-of-month 00:00 KST strictly after `ms`. */
export function nextKstMonthStart(ms: number): number {
  const d = new Date(ms + KST_OFFSET_MS);
  // Date.UTC rolls month 12 over into January of the next year.
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - KST_OFFSET_MS;
}

/** Whole seconds from `now` until `until`, at least 1 (for Retry-After). */
export function secondsUntil(now: number, until: number): number {
  return Math.max(1, Math.ceil((until - now) / 1000));
}
