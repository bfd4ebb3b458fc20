// Every environment variable the service reads, parsed and validated once at boot.
// A bad environment stops the process with a message naming the variable, rather
// than surfacing as a 500 on every request. Nothing else reads process.env.
import { z } from "zod";
import { availableParallelism } from "node:os";
import { parseProxyTrust } from "./http/proxy-trust.ts";

const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(def);
const optionalString = z.string().min(1).optional();
const bool = (def: boolean) =>
  z
    .enum(["1", "0", "true", "false", "yes", "no"])
    .default(def ? "true" : "false")
    .transform((v) => v === "1" || v === "true" || v === "yes");

const cores = Math.max(1, availableParallelism());

/** The shortest operator token accepted: a random one of this length is far past guessing, throttled or not. */
export const OPERATOR_TOKEN_MIN_LENGTH = 32;

// Each variable's `.describe()` is its meaning in docs/DEPLOY.md's reference, which
// `npm run build:docs` writes from this schema (names, defaults, accepted values).
export const ConfigSchema = z.object({
  // Development (the developer mailbox, the payment sandbox, loopback by default) is asked
  // for by name (docs/SECURITY.md "Defaults").
  NODE_ENV: z.enum(["development", "production", "test"]).default("production").describe("Production unless set: all interfaces, no developer mailbox, no payment sandbox"),
  PORT: int(8080, 0, 65535).describe("The HTTP port (0: one the OS picks, named in the \"listening\" log line)"),
  HOST: optionalString.describe("The address to listen on; unset: 0.0.0.0 in production (a container must be reachable), 127.0.0.1 otherwise"),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info").describe("The lowest level of the JSON log lines on stdout"),

  DATABASE_URL: optionalString.describe("PostgreSQL (`postgres://…`); unset: the embedded PGlite in DATA_DIR"),
  DATA_DIR: z.string().default("./data").describe("Where the embedded database and a generated key pepper live (`memory://`: in memory)"),
  REDIS_URL: optionalString.describe("Redis for limits and permits shared by several gateways; unset: kept in this process"),

  OPERATOR_TOKEN: z
    .string()
    .min(OPERATOR_TOKEN_MIN_LENGTH, `at least ${OPERATOR_TOKEN_MIN_LENGTH} characters (e.g. openssl rand -base64 33)`)
    .optional()
    .describe(`Bearer token of the operator API, /metrics and the product path; unset: one is generated and printed once at start`),
  KEY_PEPPER: z.string().min(16).optional().describe("Secret mixed into API key hashes (the same on every process); unset: generated once and kept in DATA_DIR"),

  MODEL: optionalString.describe("A manifest name (int8-static, small, medium, int8) or a path to an .onnx file; unset: the engine's default (docs/MODEL.md)"),
  MODEL_CARD: optionalString.describe("How to feed a MODEL file no manifest lists: a preset (birefnet, u2net, …) or a card file's path; unset: a <name>.card.json beside the file"),
  MODELS_DIR: optionalString.describe("Where the manifest's models are; unset: the package's own models/"),
  INFERENCE_BACKEND: z.enum(["auto", "wasm", "webgpu", "native", "stub"]).default("auto").describe("auto: WebAssembly, and WebGPU where a hardware adapter exists (Deno); native needs onnxruntime-node; stub is for load tests"),
  POOL_SIZE: int(1, 1, 64).describe("Inference workers (one model session each)"),
  THREADS_PER_SESSION: int(cores, 1, 64).meta({ description: "WebAssembly threads of one session", shownDefault: "the machine's cores" }),
  STUB_DELAY_MS: int(50, 0, 600_000).describe("How long a stub inference takes (INFERENCE_BACKEND=stub only)"),
  KEY_QUEUE_MAX: int(4, 1, 1000).describe("Requests of one key waiting for the pool (then 429 key_queue_full)"),
  QUEUE_MAX: int(64, 1, 100_000).describe("Requests waiting for the pool overall (then 503 queue_full)"),
  // Paid calls first: in the queue live jobs go first, and a test job that has waited
  // TEST_MAX_WAIT_MS goes before them (no starvation).
  TEST_SHARE_PERCENT: int(50, 0, 100).describe("Share (%) of the global concurrency cap and of the queue that test-key calls may hold"),
  TEST_MAX_WAIT_MS: int(30_000, 0).describe("A test job that has waited this long goes before live jobs"),

  PRODUCT_URL: z.string().url().optional().describe("Makes this process a gateway only, sending the work to this product service"),

  DEADLINE_MS: int(140_000, 1000).describe("A paid call's whole deadline at the gateway (then 504)"),
  RESEND_MIN_REMAINING_MS: int(30_000, 0).describe("The gateway resends a refused attempt only while this much of the deadline remains"),
  RESEND_DEFAULT_WAIT_S: int(10, 0).describe("Wait before a resend when the product names no Retry-After"),
  MAX_RESENDS: int(2, 0, 10).describe("Resends of one call to the product"),
  RECEIVE_BUDGET_BYTES: int(256 * 1024 * 1024, 1).describe("Request-body bytes one process holds at once (then 503 gateway_busy)"),
  GLOBAL_CONCURRENCY: int(32, 1).describe("Paid calls in flight across all gateways"),
  ORG_LIVE_CONCURRENCY: int(2, 1).describe("Live calls in flight per organization"),
  // Renewed every third of it while a request runs, so a gateway that dies frees its
  // slots within one lease.
  PERMIT_LEASE_MS: int(30_000, 300).describe("Length of a concurrency permit's lease"),
  INVALID_KEY_LIMIT: int(20, 1).describe("Missing, malformed or unknown keys one address may send per window (then 429)"),
  INVALID_KEY_WINDOW_S: int(60, 1).describe("The window of INVALID_KEY_LIMIT"),
  HOLD_SWEEP_INTERVAL_MS: int(15_000, 100).describe("How often holds whose call died are given back"),
  TRUST_PROXY: z
    .string()
    .default("false")
    .transform((v, ctx) => {
      const trust = parseProxyTrust(v);
      if (trust) return trust;
      ctx.addIssue({ code: "custom", message: "false, a hop count (1-8, true = 1), or a comma-separated list of proxy addresses or CIDR ranges" });
      return z.NEVER;
    })
    .describe("Which proxies may name the client in X-Forwarded-For: false, a hop count (true = 1), or their addresses and ranges (\"The client address\")"),

  SMTP_URL: optionalString.describe("Mail server (`smtp://…`); unset: mail is kept in the outbox table, served as the developer mailbox only in development on loopback"),
  MAIL_FROM: z.string().default("Pixeldrop <no-reply@pixeldrop.local>").describe("The sender of every mail"),
  PUBLIC_URL: z
    .string()
    .url()
    .refine(isWebBase, "an http(s) address without query or fragment, such as https://pixeldrop.example")
    .optional()
    .describe("The origin every link and page names (mailed links, the provider's return addresses), never taken from a request; unset: http://localhost:PORT"),
  SESSION_SECRET: z.string().min(16).optional().describe("Keys the hashes of console session cookies and one-time links; unset: plain SHA-256"),

  PAYMENT_PROVIDER: z.enum(["none", "stripe", "sandbox"]).default("none").describe("Top-ups: none (the operator API still grants credit), stripe (Checkout in KRW, credited on its signed webhook), sandbox (takes no money; refused in production)"),
  STRIPE_SECRET_KEY: z.string().regex(/^(sk|rk)_(test|live)_[A-Za-z0-9]+$/, "a Stripe secret key (sk_live_…, sk_test_… or a restricted rk_…)").optional().describe("Stripe's secret or restricted key (with PAYMENT_PROVIDER=stripe)"),
  STRIPE_WEBHOOK_SECRET: z.string().regex(/^whsec_[A-Za-z0-9+/=]+$/, "the webhook endpoint's signing secret (whsec_…)").optional().describe("The webhook endpoint's signing secret (with PAYMENT_PROVIDER=stripe)"),
  STRIPE_API_URL: z.string().url().default("https://api.stripe.com").describe("Where the Stripe API is reached (tests point it at a local stand-in)"),
});

type ParsedConfig = z.infer<typeof ConfigSchema>;

/** The parsed environment with the defaults that depend on other settings filled in. */
export type Config = Omit<ParsedConfig, "HOST" | "PUBLIC_URL"> & { HOST: string; PUBLIC_URL: string };

export class ConfigError extends Error {}

/** Parses an environment; throws ConfigError naming every bad variable. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const cleaned: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== "") cleaned[k] = v;
  const parsed = ConfigSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  const problems = crossChecks(c);
  if (problems.length > 0) throw new ConfigError(`invalid environment:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  return {
    ...c,
    HOST: c.HOST ?? (c.NODE_ENV === "production" ? "0.0.0.0" : "127.0.0.1"),
    PUBLIC_URL: (c.PUBLIC_URL ?? `http://localhost:${c.PORT}`).replace(/\/+$/, ""),
  };
}

/** Settings that are wrong only together. */
function crossChecks(c: ParsedConfig): string[] {
  const out: string[] = [];
  if (c.PAYMENT_PROVIDER === "sandbox" && c.NODE_ENV === "production") {
    out.push("PAYMENT_PROVIDER: the sandbox takes no money and is refused in production (NODE_ENV unset means production; set NODE_ENV=development to try it)");
  }
  if (c.PAYMENT_PROVIDER === "stripe") {
    if (!c.STRIPE_SECRET_KEY) out.push("STRIPE_SECRET_KEY: required with PAYMENT_PROVIDER=stripe");
    if (!c.STRIPE_WEBHOOK_SECRET) out.push("STRIPE_WEBHOOK_SECRET: required with PAYMENT_PROVIDER=stripe");
    if (!c.PUBLIC_URL) out.push("PUBLIC_URL: required with PAYMENT_PROVIDER=stripe (the customer returns there, and the webhook endpoint is registered under it)");
  }
  return out;
}

function isWebBase(u: string): boolean {
  try {
    const url = new URL(u);
    return /^https?:$/.test(url.protocol) && !url.search && !url.hash;
  } catch {
    return false; // also reported by .url()
  }
}

