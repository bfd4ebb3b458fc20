// Failures of our own stores (Postgres, Redis) are not the client's fault and not a
// bug in the request: they become 503 service_unavailable with Retry-After, and the
// service recovers by itself when the store is back.
import { isLimiterUnavailable } from "../limits/index.ts";

// Node's socket errors, the SQLSTATEs pg passes on from the server, and the 08006 that
// src/db/postgres-db.ts gives pg's own code-less "connection ended" errors.
const CONNECTION_CODES = new Set([
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

export function isStoreUnavailable(err: unknown): boolean {
  if (isLimiterUnavailable(err)) return true;
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === "string" && CONNECTION_CODES.has(code);
}
