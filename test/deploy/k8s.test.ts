// deploy/k8s/ checked against src/config.ts and against itself: each Deployment's merged
// environment parses, secrets come from the Secret, ports and probes agree with PORT,
// the grace period covers the deadline, and the Services, HPA and PDBs point at what
// exists. The last tests feed broken copies to show each kind of mistake is caught.
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkK8s } from "./support/k8s-checks.ts";
import { readK8s, type K8sObject } from "./support/deploy-files.ts";

const get = (objs: K8sObject[], kind: string, name: string) => {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `${kind} ${name}`);
  return o;
};
const container = (objs: K8sObject[], name: string) => get(objs, "Deployment", name).spec.template.spec.containers[0];

test("deploy/k8s has the objects the deployment needs", () => {
  const kinds = readK8s().map((o) => `${o.kind}/${o.metadata.name}`).sort();
  assert.deepEqual(kinds, [
    "ConfigMap/pixeldrop-gateway",
    "ConfigMap/pixeldrop-product",
    "Deployment/pixeldrop-gateway",
    "Deployment/pixeldrop-product",
    "HorizontalPodAutoscaler/pixeldrop-product",
    "Namespace/pixeldrop",
    "PodDisruptionBudget/pixeldrop-gateway",
    "PodDisruptionBudget/pixeldrop-product",
    "Secret/pixeldrop-secrets",
    "Service/pixeldrop-gateway",
    "Service/pixeldrop-product",
  ]);
});

test("the example Secret is marked as placeholders and lives outside the applied folder", () => {
  const secret = get(readK8s(), "Secret", "pixeldrop-secrets");
  assert.match(secret.file, /^deploy\/k8s\/example\//);
  for (const [k, v] of Object.entries(secret.stringData as Record<string, string>)) assert.match(v, /REPLACE-ME/, k);
  // `kubectl apply -f deploy/k8s/` does not descend into example/.
  assert.ok(!readK8s(undefined, false).some((o) => o.kind === "Secret"));
});

test("deploy/k8s agrees with src/config.ts and with itself", () => {
  assert.deepEqual(checkK8s(readK8s()).problems, []);
});

const mutations: [string, (o: K8sObject[]) => void, RegExp][] = [
  ["a renamed config variable", (o) => { const d = get(o, "ConfigMap", "pixeldrop-product").data; d.POOL = d.POOL_SIZE; delete d.POOL_SIZE; }, /POOL is not a variable/],
  ["a value the schema rejects", (o) => { get(o, "ConfigMap", "pixeldrop-gateway").data.PRODUCT_URL = "pixeldrop-product:8080"; }, /PRODUCT_URL/],
  ["a renamed probe path", (o) => { container(o, "pixeldrop-product").readinessProbe.httpGet.path = "/ready"; }, /readinessProbe path \/ready is not \/readyz/],
  ["a probe on another port", (o) => { container(o, "pixeldrop-gateway").livenessProbe.httpGet.port = 9090; }, /livenessProbe port 9090/],
  ["a containerPort that is not PORT", (o) => { container(o, "pixeldrop-gateway").ports[0].containerPort = 3000; }, /containerPort 3000 is not PORT 8080/],
  ["a grace period below the deadline", (o) => { get(o, "Deployment", "pixeldrop-product").spec.template.spec.terminationGracePeriodSeconds = 140; }, /terminationGracePeriodSeconds 140/],
  ["a preStop sleep eating the grace period", (o) => { container(o, "pixeldrop-gateway").lifecycle.preStop.exec.command = ["sleep", "45"]; }, /minus the 45s preStop/],
  ["a gateway that believes no proxy (every client the ingress)", (o) => { get(o, "ConfigMap", "pixeldrop-gateway").data.TRUST_PROXY = "false"; }, /TRUST_PROXY names no proxy/],
  ["a missing secret key", (o) => { delete get(o, "Secret", "pixeldrop-secrets").stringData.KEY_PEPPER; }, /KEY_PEPPER is not provided/],
  ["a secret in a ConfigMap", (o) => { get(o, "ConfigMap", "pixeldrop-gateway").data.KEY_PEPPER = "in-the-configmap-123456"; }, /KEY_PEPPER comes from ConfigMap/],
  ["PRODUCT_URL naming the gateway Service", (o) => { get(o, "ConfigMap", "pixeldrop-gateway").data.PRODUCT_URL = "http://pixeldrop-gateway:80"; }, /does not select the product pods/],
  ["PRODUCT_URL on the wrong port", (o) => { get(o, "ConfigMap", "pixeldrop-gateway").data.PRODUCT_URL = "http://pixeldrop-product:80"; }, /has no port 80/],
  ["an HPA on the gateway", (o) => { get(o, "HorizontalPodAutoscaler", "pixeldrop-product").spec.scaleTargetRef.name = "pixeldrop-gateway"; }, /not the product Deployment/],
  ["a PDB whose selector matches nothing", (o) => { get(o, "PodDisruptionBudget", "pixeldrop-product").spec.selector.matchLabels["app.kubernetes.io/component"] = "engine"; }, /selects 0 Deployments/],
  ["a Service selecting no pods", (o) => { get(o, "Service", "pixeldrop-gateway").spec.selector["app.kubernetes.io/component"] = "api"; }, /Service pixeldrop-gateway: selects 0/],
  ["a Service targeting a port the pod lacks", (o) => { get(o, "Service", "pixeldrop-product").spec.ports[0].targetPort = "grpc"; }, /targetPort grpc is not a port/],
  ["product CPU not matching its threads", (o) => { get(o, "ConfigMap", "pixeldrop-product").data.THREADS_PER_SESSION = "4"; }, /THREADS_PER_SESSION 4/],
];
for (const [what, mutate, expected] of mutations) {
  test(`the k8s checks catch ${what}`, () => {
    const objs = structuredClone(readK8s());
    mutate(objs);
    const { problems } = checkK8s(objs);
    assert.ok(problems.some((p) => expected.test(p)), `expected ${expected}, got:\n${problems.join("\n")}`);
  });
}
