// Both drivers put the SQLSTATE (or Node's socket error) in `.code`; these name the ones services handle.

function sqlState(e: unknown): string | undefined {
  if (typeof e === "object" && e !== null && "code" in e) {
    const code = (e as { code: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}

/** 23505: a unique index refused the row (e.g. an e-mail already registered). */
export function isUniqueViolation(e: unknown): boolean {
  return sqlState(e) === "23505";
}

/** 23503: a foreign key points nowhere (e.g. an app for an unknown org). */
export function isForeignKeyViolation(e: unknown): boolean {
  return sqlState(e) === "23503";
}

// A database that is down, restarting, refusing or not answering: Node's socket errors,
// the SQLSTATEs the server sends while shutting down or overloaded, and the 08006 that
// src/db/postgres-db.ts gives pg's own code-less "connection ended" errors.
const UNAVAILABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "57014", // query_canceled: statement_timeout on an overloaded server
  "08000",
  "08001",
  "08003",
  "08006",
]);

/** The database could not be reached or did not answer; the request itself was fine. */
export function isDbUnavailable(e: unknown): boolean {
  const code = sqlState(e);
  return code !== undefined && UNAVAILABLE.has(code);
}
