// Key rows the gateway read a moment ago, kept for a second so a key in steady use costs
// a map lookup instead of a query on every call (the lookup was one of the paid
// call's four statements). What is kept is the stored row (key, app, org, sale
// switch), never the key text; each call still judges the row against its own clock,
// so expiry and dormancy are exact. What a second of memory can miss is a change made
// by another process (a suspension, a deleted app, the sale switch): that takes effect
// within KNOWN_KEY_MEMORY_MS. Changes made through this process's database handle are
// seen at once: the handle tells forget() (src/db/write-watch.ts).
import type { KeyJoinRow } from "./records.ts";

/** How long a read key row is believed (docs/DECISIONS.md "Remembered keys"). */
export const KNOWN_KEY_MEMORY_MS = 1_000;
/** At most this many at once; when full the memory starts over. */
export const KNOWN_KEY_MEMORY_MAX = 10_000;
/** The tables a remembered row is read from (records.ts KEY_WITH_APP_AND_ORG_SQL). */
export const KNOWN_KEY_TABLES = ["api_keys", "apps", "organizations", "product_status"] as const;

export interface KnownKeys {
  get(hash: string): KeyJoinRow | undefined;
  /** Call before reading a row; pass the answer to remember(). */
  reading(): number;
  /** Kept only if nothing was forgotten since reading() (the row read may predate that change). */
  remember(hash: string, row: KeyJoinRow, reading: number): void;
  /** The key was used at `at`: a remembered row says so too (dormancy is judged from it). */
  used(keyId: string, at: number): void;
  forget(): void;
}

export function createKnownKeys(now: () => number): KnownKeys {
  let rows = new Map<string, { row: KeyJoinRow; until: number }>();
  let generation = 0;
  return {
    get(hash) {
      const e = rows.get(hash);
      if (!e) return undefined;
      if (now() < e.until) return e.row;
      rows.delete(hash);
      return undefined;
    },
    reading: () => generation,
    remember(hash, row, reading) {
      if (reading !== generation) return;
      if (rows.size >= KNOWN_KEY_MEMORY_MAX) rows = new Map();
      rows.set(hash, { row, until: now() + KNOWN_KEY_MEMORY_MS });
    },
    used(keyId, at) {
      for (const e of rows.values()) if (e.row.key_id === keyId) e.row = { ...e.row, last_used_at: at };
    },
    forget() {
      generation++;
      rows = new Map();
    },
  };
}
