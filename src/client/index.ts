// The package's `pixeldrop/client` entry: a small fetch-based client for POST
// /v1.0/removebg that follows the service's retry contract. No Node built-ins are
// used, so it runs in Node 20+, Deno and browsers (keep API keys server-side).
export {
  createClient,
  removeBackground,
  isResendable,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_MAX_RESENDS,
  DEFAULT_RETRY_AFTER_S,
  type ClientOptions,
  type CallOptions,
  type PixeldropClient,
} from "./client.ts";
export { PixeldropError, PixeldropNetworkError, PixeldropTimeoutError, PixeldropAbortError, type PixeldropErrorKind } from "./errors.ts";
export type { ImageInput, RemoveOptions, RemoveResult, RemoveSize } from "./wire.ts";
