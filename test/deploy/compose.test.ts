// deploy/compose.yaml (with deploy/.env.example and haproxy.cfg) checked against
// src/config.ts: variable names and values, secrets, ports, health checks, stop grace,
// where PRODUCT_URL and the published port lead, and start order. The last tests feed
// broken copies to show each kind of mistake is caught.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { appServices, checkAppService, checkWiring } from "./support/compose-checks.ts";
import { DEPLOY, interpolateTree, parseEnvFile, readComposeRaw, readHaproxy, readText, type Compose, type Interpolated } from "./support/deploy-files.ts";

const vars = parseEnvFile(readText(join(DEPLOY, ".env.example")));

function load(raw: Compose = readComposeRaw()) {
  const refs: Interpolated["refs"] = [];
  const compose = interpolateTree(raw, vars, refs) as Compose;
  return { raw, compose, refs };
}

function problemsOf(raw: Compose): string[] {
  const { compose } = load(raw);
  const perService = appServices(compose).flatMap(([name, svc]) => checkAppService(name, svc, raw.services[name]).problems);
  return [...perService, ...checkWiring(compose, readHaproxy()).problems];
}

test("every variable compose.yaml requires is documented in deploy/.env.example", () => {
  const { refs } = load();
  const required = [...new Set(refs.filter((r) => r.required).map((r) => r.name))].sort();
  assert.deepEqual(required, ["KEY_PEPPER", "OPERATOR_TOKEN", "POSTGRES_PASSWORD", "SESSION_SECRET"]);
  for (const name of required) assert.ok(vars[name], `${name} missing from .env.example`);
});

test("compose runs two gateway and two product replicas of the one image", () => {
  const { compose } = load();
  const apps = Object.fromEntries(appServices(compose));
  assert.deepEqual(Object.keys(apps).sort(), ["gateway", "product"]);
  for (const svc of Object.values(apps)) {
    assert.equal(svc.deploy?.replicas, 2);
    assert.equal(svc.image, "pixeldrop:local");
    assert.equal(svc.build.dockerfile, "Dockerfile");
  }
});

test("compose.yaml agrees with src/config.ts and with itself", () => {
  assert.deepEqual(problemsOf(readComposeRaw()), []);
});

test("a missing required secret stops the interpolation, as docker compose would", () => {
  const { OPERATOR_TOKEN: _, ...rest } = vars;
  assert.throws(() => interpolateTree(readComposeRaw(), rest), /OPERATOR_TOKEN/);
});

// Each mutation below is one realistic mistake; the checks must name it.
const mutations: [string, (c: Compose) => void, RegExp][] = [
  ["a renamed config variable", (c) => { const e = c.services.product.environment; e.THREADS = e.THREADS_PER_SESSION; delete e.THREADS_PER_SESSION; }, /THREADS is not a variable/],
  ["a value the schema rejects", (c) => { c.services.product.environment.INFERENCE_BACKEND = "cuda"; }, /INFERENCE_BACKEND/],
  ["a renamed probe path", (c) => { c.services.gateway.healthcheck.test[3] = c.services.gateway.healthcheck.test[3].replace("/readyz", "/ready"); }, /path \/ready is not/],
  ["a health check on the wrong port", (c) => { c.services.product.environment.PORT = "9090"; }, /port 8080 is not PORT 9090|does not include PORT 9090/],
  ["a stop grace below the deadline", (c) => { c.services.gateway.stop_grace_period = "120s"; }, /stop_grace_period 120s/],
  ["a gateway that believes no proxy", (c) => { c.services.gateway.environment.TRUST_PROXY = "false"; }, /TRUST_PROXY names no proxy/],
  ["a gateway without its pepper", (c) => { delete c.services.gateway.environment.KEY_PEPPER; }, /KEY_PEPPER is not provided/],
  ["a hard-coded secret", (c) => { c.services.gateway.environment.SESSION_SECRET = "written-into-the-file-1234"; }, /SESSION_SECRET is written/],
  ["PRODUCT_URL that leads back to the gateways", (c) => { c.services.gateway.environment.PRODUCT_URL = "http://lb:8080"; }, /leads to gateway, not a product/],
  ["PRODUCT_URL to a missing frontend", (c) => { c.services.gateway.environment.PRODUCT_URL = "http://lb:9999"; }, /no load-balancer frontend/],
  ["a start order that does not wait", (c) => { c.services.gateway.depends_on.postgres.condition = "service_started"; }, /waits for postgres with service_started/],
];
for (const [what, mutate, expected] of mutations) {
  test(`the compose checks catch ${what}`, () => {
    const raw = structuredClone(readComposeRaw());
    mutate(raw);
    const problems = problemsOf(raw);
    assert.ok(problems.some((p) => expected.test(p)), `expected ${expected}, got:\n${problems.join("\n")}`);
  });
}

const haproxy = spawnSync("haproxy", ["-v"], { encoding: "utf8" });
test("haproxy accepts haproxy.cfg (when haproxy is installed)", { skip: haproxy.status !== 0 && "haproxy not installed" }, () => {
  const r = spawnSync("haproxy", ["-c", "-f", join(DEPLOY, "haproxy.cfg")], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
