// The soak run's mixed traffic: each kind is a loop of one caller that sends, reads
// the answer, and waits a little (or what Retry-After says), until told to stop.
// Every answer is tallied by "status code"; which ones are expected is decided here.
import { TINY_PNG, UNKNOWN_KEY } from "../load/scenarios.ts";
import { outcomeOf, sendRemovebg, type FormFields, type Outcome } from "../support/removebg-request.ts";

export interface Caller {
  kind: string;
  key: string | undefined;
  fields: FormFields;
  /** Pause between calls when the answer gives no Retry-After. */
  pauseMs: number;
}

/** Answers any soak caller may get. Anything else (500, 502, 504, …) is a finding. */
export const EXPECTED_SOAK = new Set([
  "200",
  "400 invalid_parameter",
  "400 unsupported_parameter",
  "401 invalid_api_key",
  "402 insufficient_credits",
  "429 rate_limited",
  "429 daily_limit_reached",
  "429 test_quota_exceeded",
  "429 key_queue_full",
  "503 deadline_unreachable",
  "503 queue_full",
]);

export interface Keys {
  /** Funded orgs, one caller each: the paid path. */
  paid: string[];
  /** One org with several callers: over its live cap of 2. */
  crowded: string;
  /** An org with 50 KRW: two preview calls, then 402. */
  poor: string;
  /** An org whose daily limit is 44 KRW: two preview calls a day, then 429. */
  capped: string;
  test: string;
}

export function mix(k: Keys): Caller[] {
  const preview: FormFields = { image_file: TINY_PNG, size: "preview" };
  return [
    ...k.paid.map((key) => ({ kind: "paid", key, fields: preview, pauseMs: 0 })),
    ...[1, 2, 3].map(() => ({ kind: "over org cap", key: k.crowded, fields: preview, pauseMs: 500 })),
    { kind: "poor org", key: k.poor, fields: preview, pauseMs: 2000 },
    { kind: "daily-capped org", key: k.capped, fields: preview, pauseMs: 2000 },
    { kind: "test key", key: k.test, fields: preview, pauseMs: 3000 },
    { kind: "unknown key", key: UNKNOWN_KEY, fields: preview, pauseMs: 1000 },
    { kind: "bad size", key: k.paid[0], fields: { image_file: TINY_PNG, size: "huge" }, pauseMs: 500 },
    { kind: "image_url", key: k.paid[0], fields: { image_url: "https://example.com/a.png" }, pauseMs: 1000 },
    { kind: "crop_margin", key: k.paid[0], fields: { image_file: TINY_PNG, crop_margin: "10" }, pauseMs: 1000 },
    { kind: "not an image", key: k.crowded, fields: { image_file: new TextEncoder().encode("plain text, not a picture"), size: "preview" }, pauseMs: 1000 },
  ];
}

export interface Tally {
  byKind: Map<string, Record<string, number>>;
  clientFailures: number;
  all: Outcome[];
}

export async function runCaller(
  c: Caller,
  send: (path: string, init: RequestInit) => Promise<Response>,
  until: () => boolean,
  tally: Tally,
): Promise<void> {
  const mine = tally.byKind.get(c.kind) ?? {};
  tally.byKind.set(c.kind, mine);
  while (!until()) {
    let out: Outcome;
    try {
      const res = await sendRemovebg((p, init) => send(p, { ...init, signal: AbortSignal.timeout(150_000) }), c.key, c.fields);
      out = await outcomeOf(res);
    } catch {
      tally.clientFailures++;
      await sleep(1000);
      continue;
    }
    tally.all.push(out);
    const label = out.code ? `${out.status} ${out.code}` : String(out.status);
    mine[label] = (mine[label] ?? 0) + 1;
    // Retry-After is honoured as the spec asks of clients, at most 60 s so the loop keeps going.
    const wait = out.retryAfter !== undefined ? Math.min(60, Number(out.retryAfter)) * 1000 : c.pauseMs;
    if (wait > 0) await sleep(wait);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
