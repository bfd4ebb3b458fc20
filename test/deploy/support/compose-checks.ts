// Checks of deploy/compose.yaml (+ haproxy.cfg) against src/config.ts. Each returns a
// list of problems (empty = fine), so a test can show every one at once and the
// negative tests can show that a broken copy is caught.
import { checkEnv, GATEWAY_SECRETS, missingSecrets, PRODUCT_SECRETS, proxyTrustProblems } from "./config-checks.ts";
import { durationSeconds, serviceEnv, type Compose, type ComposeService, type HaproxySection } from "./deploy-files.ts";

export interface Probe {
  where: string;
  role: "gateway" | "product";
  path: string;
}

const isApp = (svc: ComposeService) => svc.build !== undefined || String(svc.image ?? "").startsWith("pixeldrop");
export const appServices = (c: Compose) => Object.entries(c.services).filter(([, s]) => isApp(s));
const roleOf = (svc: ComposeService): "gateway" | "product" => (serviceEnv(svc).PRODUCT_URL ? "gateway" : "product");

/** "http://host:port/path" pieces found in a string (health check commands). */
function urlsIn(text: string): { host: string; port: number; path: string }[] {
  return [...text.matchAll(/https?:\/\/([A-Za-z0-9_.-]+):(\d+)(\/[A-Za-z0-9_./-]*)?/g)].map((m) => ({
    host: m[1],
    port: Number(m[2]),
    path: m[3] ?? "/",
  }));
}

/** Per-service checks: env names and values, secrets, port, health check, stop grace. */
export function checkAppService(name: string, svc: ComposeService, raw: ComposeService): { problems: string[]; probes: Probe[] } {
  const where = `compose ${name}`;
  const env = serviceEnv(svc);
  const { problems, config } = checkEnv(where, env);
  const role = roleOf(svc);
  problems.push(...missingSecrets(where, env, role === "gateway" ? GATEWAY_SECRETS : PRODUCT_SECRETS));
  // Secrets must come from deploy/.env, never be written into the file.
  const rawEnv = serviceEnv(raw);
  for (const k of ["OPERATOR_TOKEN", "KEY_PEPPER", "SESSION_SECRET", "DATABASE_URL"]) {
    if (rawEnv[k] !== undefined && !rawEnv[k].includes("${")) problems.push(`${where}: ${k} is written in compose.yaml, not taken from .env`);
  }
  if (!config) return { problems, probes: [] };
  if (role === "gateway") problems.push(...proxyTrustProblems(where, config));

  const exposed = (svc.expose ?? []).map(Number);
  if (!exposed.includes(config.PORT)) problems.push(`${where}: expose ${JSON.stringify(svc.expose)} does not include PORT ${config.PORT}`);

  const probes: Probe[] = [];
  const test = [svc.healthcheck?.test ?? []].flat().join(" ");
  const urls = urlsIn(test);
  if (urls.length === 0) problems.push(`${where}: no HTTP health check`);
  for (const u of urls) {
    if (u.port !== config.PORT) problems.push(`${where}: health check port ${u.port} is not PORT ${config.PORT}`);
    if (u.path !== "/readyz") problems.push(`${where}: health check path ${u.path} is not /readyz`);
    probes.push({ where, role, path: u.path });
  }

  const grace = svc.stop_grace_period === undefined ? 10 : durationSeconds(svc.stop_grace_period);
  if (grace <= config.DEADLINE_MS / 1000) {
    problems.push(`${where}: stop_grace_period ${grace}s does not exceed the ${config.DEADLINE_MS / 1000}s deadline`);
  }
  if (role === "product" && config.THREADS_PER_SESSION > Number(svc.deploy?.resources?.limits?.cpus ?? Infinity)) {
    problems.push(`${where}: THREADS_PER_SESSION ${config.THREADS_PER_SESSION} exceeds the cpu limit`);
  }
  return { problems, probes };
}

const directive = (s: HaproxySection | undefined, word: string) =>
  (s?.lines ?? []).filter((l) => l.split(/\s+/)[0] === word).map((l) => l.split(/\s+/).slice(1));

/** The compose services a load-balancer port leads to: bind → default_backend → server-template. */
export function haproxyTargets(cfg: HaproxySection[], port: number): { host: string; port: number; checkPath?: string }[] {
  const front = cfg.find((s) => s.kind === "frontend" && directive(s, "bind").some((b) => Number(b[0].split(":").pop()) === port));
  const backendName = directive(front, "default_backend")[0]?.[0];
  const back = cfg.find((s) => s.kind === "backend" && s.name === backendName);
  const send = directive(back, "http-check").find((a) => a[0] === "send") ?? [];
  const checkPath = send.includes("uri") ? send[send.indexOf("uri") + 1] : undefined;
  const servers = [...directive(back, "server-template").map((a) => a[2]), ...directive(back, "server").map((a) => a[1])];
  return servers.map((hp) => ({ host: hp.split(":")[0], port: Number(hp.split(":")[1]), checkPath }));
}

/** Cross-service checks: roles, where PRODUCT_URL and the public port lead, stores, start order. */
export function checkWiring(c: Compose, cfg: HaproxySection[]): { problems: string[]; probes: Probe[] } {
  const problems: string[] = [];
  const probes: Probe[] = [];
  const apps = appServices(c);
  const portOf = (name: string) => Number(serviceEnv(c.services[name] ?? {}).PORT ?? 8080);
  const gateways = apps.filter(([, s]) => roleOf(s) === "gateway").map(([n]) => n);
  const products = apps.filter(([, s]) => roleOf(s) === "product").map(([n]) => n);
  if (gateways.length === 0) problems.push("compose: no gateway service (an app service with PRODUCT_URL)");
  if (products.length === 0) problems.push("compose: no product service (an app service without PRODUCT_URL)");

  /** Follows host:port through the load balancer when the host is the balancer. */
  const resolve = (host: string, port: number, via: string) => {
    if (c.services[host] && !isApp(c.services[host])) {
      const targets = haproxyTargets(cfg, port);
      if (targets.length === 0) problems.push(`${via}: ${host}:${port} is no load-balancer frontend with servers`);
      for (const t of targets) {
        if (t.checkPath) probes.push({ where: `haproxy ${t.host}`, role: roleOf(c.services[t.host] ?? {}), path: t.checkPath });
        else problems.push(`${via}: load-balancer backend for ${t.host} has no HTTP check`);
      }
      return targets.map((t) => ({ host: t.host, port: t.port }));
    }
    return [{ host, port }];
  };

  for (const g of gateways) {
    const env = serviceEnv(c.services[g]);
    const url = new URL(env.PRODUCT_URL);
    for (const t of resolve(url.hostname, Number(url.port || 80), `compose ${g} PRODUCT_URL`)) {
      if (!products.includes(t.host)) problems.push(`compose ${g}: PRODUCT_URL leads to ${t.host}, not a product service`);
      else if (t.port !== portOf(t.host)) problems.push(`compose ${g}: PRODUCT_URL leads to ${t.host}:${t.port}, its PORT is ${portOf(t.host)}`);
    }
  }
  // Store URLs, where set, name the compose services and the postgres service's credentials.
  for (const [name, svc] of apps) {
    const env = serviceEnv(svc);
    for (const v of ["DATABASE_URL", "REDIS_URL"]) {
      if (!env[v]) continue;
      const host = new URL(env[v]).hostname;
      if (!c.services[host]) problems.push(`compose ${name}: ${v} host ${host} is not a compose service`);
    }
    const pg = env.DATABASE_URL ? c.services[new URL(env.DATABASE_URL).hostname] : undefined;
    if (pg) {
      const u = new URL(env.DATABASE_URL);
      const pgEnv = serviceEnv(pg);
      if (decodeURIComponent(u.password) !== pgEnv.POSTGRES_PASSWORD) problems.push(`compose ${name}: DATABASE_URL password is not postgres' POSTGRES_PASSWORD`);
      if (u.username !== pgEnv.POSTGRES_USER || u.pathname !== `/${pgEnv.POSTGRES_DB}`) problems.push(`compose ${name}: DATABASE_URL user/database differ from the postgres service`);
    }
  }

  // The published port must lead to the gateways.
  const published = Object.entries(c.services).flatMap(([n, s]) =>
    (s.ports ?? []).map((p: string) => ({ service: n, container: Number(String(p).split(":").pop()!.split("/")[0]) })),
  );
  if (published.length === 0) problems.push("compose: nothing is published");
  for (const p of published) {
    for (const t of resolve(p.service, p.container, `compose ${p.service} published port ${p.container}`)) {
      if (!gateways.includes(t.host)) problems.push(`compose: published port ${p.container} leads to ${t.host}, not a gateway`);
      else if (t.port !== portOf(t.host)) problems.push(`compose: published port leads to ${t.host}:${t.port}, its PORT is ${portOf(t.host)}`);
    }
  }

  // Start order: a dependency that has a health check is waited for until healthy.
  for (const [name, svc] of Object.entries(c.services)) {
    const deps = svc.depends_on ?? {};
    if (Array.isArray(deps)) {
      problems.push(`compose ${name}: depends_on in the short form waits for nothing`);
      continue;
    }
    for (const [dep, spec] of Object.entries(deps as Record<string, { condition?: string }>)) {
      if (!c.services[dep]) problems.push(`compose ${name}: depends on unknown service ${dep}`);
      else if (c.services[dep].healthcheck && spec.condition !== "service_healthy") {
        problems.push(`compose ${name}: waits for ${dep} with ${spec.condition ?? "service_started"}, not service_healthy`);
      }
    }
  }
  for (const g of gateways) {
    const deps = c.services[g].depends_on ?? {};
    for (const need of [...products, "postgres", "redis"]) {
      if (deps[need]?.condition !== "service_healthy") problems.push(`compose ${g}: does not wait for ${need} to be healthy`);
    }
  }
  return { problems, probes };
}
