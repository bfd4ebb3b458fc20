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

export const ConfigSchema = z.object({
  // Unset: production. Development (the developer mailbox, the payment sandbox, loopback
  // by default) is asked for by name (docs/SECURITY.md "Defaults").
  NODE_ENV: z.enum(["development", "production", "test"]).default("production"),
  PORT: int(8080, 0, 65535),
  // Unset: 0.0.0.0 in production (a container must be reachable), 127.0.0.1 otherwise.
  HOST: optionalString,
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),

  // Stores: unset means the embedded defaults (PGlite in DATA_DIR, in-process limiter).
  DATABASE_URL: optionalString,
  DATA_DIR: z.string().default("./data"),
  REDIS_URL: optionalString,

  // Secrets. OPERATOR_TOKEN unset: one is generated and printed once at start.
  OPERATOR_TOKEN: z
    .string()
    .min(OPERATOR_TOKEN_MIN_LENGTH, `at least ${OPERATOR_TOKEN_MIN_LENGTH} characters (e.g. openssl rand -base64 33)`)
    .optional(),
  // Pepper mixed into key hashes. Unset: generated once and kept in DATA_DIR.
  KEY_PEPPER: z.string().min(16).optional(),

  // Inference
  MODEL: optionalString, // a manifest name (int8-static, small, medium, int8) or a path to an .onnx (with a card, or a manifest entry); unset: the engine's default (src/wiring/services.ts servedModel)
  // How to feed a MODEL file no manifest lists: a preset (birefnet, u2net, ...) or a card
  // file's path; unset: a <name>.card.json beside the file (docs/MODEL.md, "Model cards").
  MODEL_CARD: optionalString,
  MODELS_DIR: optionalString, // default: the package's own models/
  INFERENCE_BACKEND: z.enum(["auto", "wasm", "webgpu", "native", "stub"]).default("auto"),
  POOL_SIZE: int(1, 1, 64),
  THREADS_PER_SESSION: int(cores, 1, 64),
  STUB_DELAY_MS: int(50, 0, 600_000), // only with INFERENCE_BACKEND=stub (load tests)
  KEY_QUEUE_MAX: int(4, 1, 1000), // requests of one key waiting for the pool
  QUEUE_MAX: int(64, 1, 100_000), // requests waiting for the pool overall
  // Paid calls first: test-key calls may hold at most this share (%) of the global
  // concurrency cap and of the product's queue; in the queue live jobs go first, and a
  // test job that has waited TEST_MAX_WAIT_MS goes before them (no starvation).
  TEST_SHARE_PERCENT: int(50, 0, 100),
  TEST_MAX_WAIT_MS: int(30_000, 0),

  // Split deployment: the gateway calls this product service instead of the in-process one.
  PRODUCT_URL: z.string().url().optional(),

  // Gateway
  DEADLINE_MS: int(140_000, 1000),
  RESEND_MIN_REMAINING_MS: int(30_000, 0),
  RESEND_DEFAULT_WAIT_S: int(10, 0),
  MAX_RESENDS: int(2, 0, 10),
  RECEIVE_BUDGET_BYTES: int(256 * 1024 * 1024, 1),
  GLOBAL_CONCURRENCY: int(32, 1),
  ORG_LIVE_CONCURRENCY: int(2, 1),
  // Concurrency permits are leases of this length, renewed every third of it while a
  // request runs, so a gateway that dies frees its slots within one lease.
  PERMIT_LEASE_MS: int(30_000, 300),
  INVALID_KEY_LIMIT: int(20, 1),
  INVALID_KEY_WINDOW_S: int(60, 1),
  HOLD_SWEEP_INTERVAL_MS: int(15_000, 100),
  // Which proxies may name the client in X-Forwarded-For: false, a hop count (true = 1),
  // or their addresses/ranges (src/http/proxy-trust.ts; docs/DEPLOY.md "The client address").
  TRUST_PROXY: z
    .string()
    .default("false")
    .transform((v, ctx) => {
      const trust = parseProxyTrust(v);
      if (trust) return trust;
      ctx.addIssue({ code: "custom", message: "false, a hop count (1-8, true = 1), or a comma-separated list of proxy addresses or CIDR ranges" });
      return z.NEVER;
    }),

  // Console. SMTP_URL unset: mail goes to the outbox table (served as the developer
  // mailbox only in development on loopback). PUBLIC_URL: the origin every link and
  // page names (mailed links, the provider's return addresses); never taken from a
  // request's headers. Unset: http://localhost:PORT.
  SMTP_URL: optionalString,
  MAIL_FROM: z.string().default("Pixeldrop <no-reply@pixeldrop.local>"),
  PUBLIC_URL: z
    .string()
    .url()
    .refine(isWebBase, "an http(s) address without query or fragment, such as https://pixeldrop.example")
    .optional(),
  // Keys the hashes of console session cookies and one-time links. Unset: plain SHA-256.
  SESSION_SECRET: z.string().min(16).optional(),

  // Top-ups (docs/DECISIONS.md "Payments"). none: the console offers none (the operator
  // API still grants credit). stripe: Stripe Checkout in KRW, credited on its signed
  // webhook. sandbox: approves every payment, takes no money; outside production only.
  PAYMENT_PROVIDER: z.enum(["none", "stripe", "sandbox"]).default("none"),
  STRIPE_SECRET_KEY: z.string().regex(/^(sk|rk)_(test|live)_[A-Za-z0-9]+$/, "a Stripe secret key (sk_live_…, sk_test_… or a restricted rk_…)").optional(),
  STRIPE_WEBHOOK_SECRET: z.string().regex(/^whsec_[A-Za-z0-9+/=]+$/, "the webhook endpoint's signing secret (whsec_…)").optional(),
  // Where the Stripe API is reached (tests point it at a local stand-in).
  STRIPE_API_URL: z.string().url().default("https://api.stripe.com"),
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

