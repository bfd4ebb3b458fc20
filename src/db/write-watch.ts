// A Db handle that says when a statement through it may have changed some tables: what
// an in-memory copy of those tables' rows (the gateway's remembered keys,
// src/keys/known-keys.ts) needs in order to forget them at once instead of at the end
// of its time limit. Told after the change is visible to others: after the statement,
// or after COMMIT for a statement inside a transaction (a reader in between would
// still read the old row, and must not be the one remembered).
//
// The test is on the statement's text: a write verb, then one of the table names as a
// word. It errs towards telling (a statement that merely mentions a table after its
// verb counts), which costs the listener a forgotten memory, never a stale one.
import type { Db } from "./types.ts";

/** Statement texts already judged: a handful of texts recur on every call. */
const MEMO_MAX = 2_000;

export function watchWrites(db: Db, tables: readonly string[], changed: () => void): Db {
  const pattern = new RegExp(`\\b(?:insert|update|delete|truncate|merge|alter|drop)\\b[\\s\\S]*\\b(?:${tables.join("|")})\\b`, "i");
  const memo = new Map<string, boolean>();
  const writes = (text: string): boolean => {
    let w = memo.get(text);
    if (w === undefined) {
      w = pattern.test(text);
      if (memo.size >= MEMO_MAX) memo.clear();
      memo.set(text, w);
    }
    return w;
  };

  const wrap = (inner: Db, inTransaction: { wrote: boolean } | undefined): Db => ({
    kind: inner.kind,
    async query(text, params, o) {
      if (o?.unwatched || !writes(text)) return inner.query(text, params, o);
      if (inTransaction) {
        inTransaction.wrote = true;
        return inner.query(text, params, o);
      }
      try {
        return await inner.query(text, params, o);
      } finally {
        changed();
      }
    },
    async transaction(fn) {
      // A transaction inside one is the same transaction (types.ts): told at the outer COMMIT.
      if (inTransaction) return inner.transaction((tx) => fn(wrap(tx, inTransaction)));
      const t = { wrote: false };
      try {
        return await inner.transaction((tx) => fn(wrap(tx, t)));
      } finally {
        if (t.wrote) changed();
      }
    },
    async exec(script) {
      // Scripts are migrations and tests' set-up: always told.
      try {
        await inner.exec(script);
      } finally {
        if (inTransaction) inTransaction.wrote = true;
        else changed();
      }
    },
    close: () => inner.close(),
  });
  return wrap(db, undefined);
}
