// Every health-check path written in the deployment files (compose health checks,
// haproxy's backend checks, Kubernetes probes, the Dockerfile HEALTHCHECK) must be a
// route the real app answers with 200, in the role the file gives that process:
// gateway only (PRODUCT_URL set, no engine) or gateway + engine. Renaming /readyz or
// /healthz in the app, or mistyping it in a file, fails here.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { appServices, checkAppService, checkWiring, type Probe } from "./support/compose-checks.ts";
import { probeProblems, roleApps, type RoleApps } from "./support/config-checks.ts";
import { DEPLOY, interpolateTree, parseEnvFile, readComposeRaw, readDockerfile, readHaproxy, readK8s, readText, resolvedStage, type Compose } from "./support/deploy-files.ts";
import { checkK8s } from "./support/k8s-checks.ts";

function allProbes(): Probe[] {
  const raw = readComposeRaw();
  const compose = interpolateTree(raw, parseEnvFile(readText(join(DEPLOY, ".env.example")))) as Compose;
  const probes = [
    ...appServices(compose).flatMap(([name, svc]) => checkAppService(name, svc, raw.services[name]).probes),
    ...checkWiring(compose, readHaproxy()).probes,
    ...checkK8s(readK8s()).probes,
  ];
  // The image's own HEALTHCHECK runs in either role.
  const { stages } = readDockerfile();
  const hc = resolvedStage(stages, stages.length - 1).find((i) => i.op === "HEALTHCHECK")!.args;
  const path = /\/\/127\.0\.0\.1:'\+\(process\.env\.PORT\|\|\d+\)\+'(\/[a-z]+)'/.exec(hc)?.[1];
  assert.ok(path, `no path found in HEALTHCHECK ${hc}`);
  probes.push({ where: "Dockerfile HEALTHCHECK", role: "gateway", path }, { where: "Dockerfile HEALTHCHECK", role: "product", path });
  return probes;
}

let apps: RoleApps;
before(async () => {
  apps = await roleApps();
});
after(async () => {
  await apps?.close();
});

test("the files name probes for both roles, on /readyz and /healthz", () => {
  const probes = allProbes();
  const kinds = new Set(probes.map((p) => `${p.role} ${p.path}`));
  assert.deepEqual([...kinds].sort(), ["gateway /healthz", "gateway /readyz", "product /healthz", "product /readyz"]);
  assert.ok(probes.some((p) => p.where.startsWith("haproxy")), "haproxy backend checks found");
  assert.ok(probes.some((p) => p.where.startsWith("compose")), "compose health checks found");
  assert.ok(probes.some((p) => p.where.startsWith("k8s")), "k8s probes found");
});

test("every probe path is a route its role's app answers with 200", async () => {
  const problems: string[] = [];
  for (const p of allProbes()) problems.push(...(await probeProblems(p.where, apps[p.role].app, p.path)));
  assert.deepEqual(problems, []);
});

test("the gateway-only app has no engine, so its readiness does not wait for a model", async () => {
  const res = await apps.gateway.app.request("/readyz");
  const body = (await res.json()) as { checks: Record<string, unknown> };
  assert.equal(res.status, 200);
  assert.ok(!("models" in body.checks), JSON.stringify(body));
  const product = (await (await apps.product.app.request("/readyz")).json()) as { checks: Record<string, unknown> };
  assert.ok("models" in product.checks, JSON.stringify(product));
});

test("a mistyped probe path is reported", async () => {
  assert.match((await probeProblems("x", apps.gateway.app, "/ready")).join(), /\/ready answers 404/);
});
