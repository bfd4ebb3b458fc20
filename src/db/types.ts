// The one query interface every service uses. Two implementations sit behind it
// (node-postgres for a real server, PGlite for the embedded default) so services
// write the same `$1`-style SQL for both and never see which one is in use.
//
// Values coming back are normalised by both implementations (see values.ts):
//   bigint / numeric -> number (throws if it would not fit a safe integer)
//   timestamptz      -> number, milliseconds since the epoch
// Timestamps go *in* as Date objects (`new Date(ms)`), so SQL never reads the
// database clock: every service takes an injectable `now()` instead.

export type Row = Record<string, unknown>;

export interface QueryOptions {
  prepare?: string;
  /**
   * A write that changes nothing a copy kept in memory relies on (a last-use stamp):
   * a handle from watchWrites (write-watch.ts) does not report it.
   */
  unwatched?: boolean;
}

export interface Db {
  /**
   * Runs one statement with `$1…$n` parameters and returns its rows. `o.prepare`: a name,
   * unique to this statement text, under which node-postgres prepares it once per
   * connection, so Postgres parses and plans it once instead of on every call (for the
   * statements every paid call runs; PGlite ignores it).
   */
  query<T = Row>(text: string, params?: unknown[], o?: QueryOptions): Promise<T[]>;
  /**
   * Runs `fn` inside BEGIN…COMMIT; a throw rolls back and rethrows. `tx` must be used
   * for every statement inside (on PGlite the outer handle waits until the
   * transaction ends, so using it inside would deadlock). Calling `transaction` on a
   * `tx` runs `fn` in the same transaction (no savepoint).
   */
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
  close(): Promise<void>;
  readonly kind: "postgres" | "pglite";
}

export interface OpenDbOptions {
  /** postgres://… — when set, a node-postgres (pg) pool; otherwise PGlite. */
  databaseUrl?: string;
  /** PGlite data directory (e.g. ./data/pglite), or "memory://" for a throwaway one. */
  dataDir: string;
  /** Pool size for node-postgres (default 10). */
  max?: number;
}
