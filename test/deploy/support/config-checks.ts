// What the deployment files are checked against: the config schema of src/config.ts
// (names and values) and the routes the real app answers, for probe paths.
import { ConfigError, ConfigSchema, parseConfig, type Config } from "../../../src/config.ts";
import { makeHarness, type Harness } from "../../support/harness.ts";

export const CONFIG_NAMES: ReadonlySet<string> = new Set(Object.keys(ConfigSchema.shape));

/** Secrets every process of a role must be given (never left to be generated). */
export const GATEWAY_SECRETS = ["OPERATOR_TOKEN", "KEY_PEPPER", "SESSION_SECRET", "DATABASE_URL", "REDIS_URL"] as const;
// Products share the database (their process opens one whatever its role) and the pepper
// (else one would be generated and stored in it), but not Redis.
export const PRODUCT_SECRETS = ["OPERATOR_TOKEN", "KEY_PEPPER", "DATABASE_URL"] as const;

/**
 * Problems with one container's environment: names the schema does not know (zod
 * would drop them silently) and values parseConfig rejects. Returns the parsed config
 * too when it parses.
 */
export function checkEnv(where: string, env: Record<string, string>): { problems: string[]; config?: Config } {
  const problems = Object.keys(env)
    .filter((k) => !CONFIG_NAMES.has(k))
    .map((k) => `${where}: ${k} is not a variable of src/config.ts`);
  try {
    return { problems, config: parseConfig(env) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { problems: [...problems, `${where}: ${err.message}`] };
  }
}

/**
 * A gateway is reached through the deployment's proxy (HAProxy, the ingress): unless
 * TRUST_PROXY names it, every client is that proxy's address to the per-address limits,
 * and one caller's bad keys or sign-ins count against everyone.
 */
export function proxyTrustProblems(where: string, config: Config): string[] {
  return config.TRUST_PROXY.kind === "none" ? [`${where}: TRUST_PROXY names no proxy, so every client is the proxy's address`] : [];
}

/** Secrets of a role that are missing or empty in an environment. */
export function missingSecrets(where: string, env: Record<string, string>, names: readonly string[]): string[] {
  return names.filter((n) => !env[n]).map((n) => `${where}: secret ${n} is not provided`);
}

export interface RoleApps {
  /** A process without PRODUCT_URL: gateway and engine. */
  product: Harness;
  /** A process with PRODUCT_URL: gateway only, no engine. */
  gateway: Harness;
  close(): Promise<void>;
}

/** Both roles of the real app (embedded stores, stub model), for asking about routes. */
export async function roleApps(): Promise<RoleApps> {
  const product = await makeHarness({ embedded: true });
  const gateway = await makeHarness({ embedded: true, engine: null, env: { PRODUCT_URL: "http://product.invalid:8080" } });
  return { product, gateway, close: async () => void (await Promise.all([product.close(), gateway.close()])) };
}

/**
 * Problems with a probe path: the app of that role must answer it with 200 (the
 * harness stores and stub model are ready). A renamed route answers 404.
 */
export async function probeProblems(where: string, app: Harness["app"], path: string): Promise<string[]> {
  const res = await app.request(path);
  await res.arrayBuffer();
  return res.status === 200 ? [] : [`${where}: probe path ${path} answers ${res.status}, not 200`];
}
