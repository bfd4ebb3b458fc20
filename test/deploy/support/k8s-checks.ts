// Checks of deploy/k8s/ against src/config.ts and against itself: each Deployment's
// merged environment (ConfigMaps + Secret + env), ports, probes, grace period, and that
// Services, the HPA and the PDBs point at objects that exist. Problems are returned as
// lists so negative tests can feed broken copies.
import { checkEnv, GATEWAY_SECRETS, missingSecrets, PRODUCT_SECRETS, proxyTrustProblems } from "./config-checks.ts";
import type { K8sObject } from "./deploy-files.ts";
import type { Probe } from "./compose-checks.ts";

type Container = Record<string, any>;

const byKind = (objs: K8sObject[], kind: string) => objs.filter((o) => o.kind === kind);
const find = (objs: K8sObject[], kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name);
const podLabels = (d: K8sObject): Record<string, string> => d.spec?.template?.metadata?.labels ?? {};
const matches = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

/** The environment a container starts with: envFrom sources, then env entries (which win). */
export function containerEnv(objs: K8sObject[], ct: Container, where: string, problems: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  const dataOf = (kind: string, name: string): Record<string, string> | undefined => {
    const o = find(objs, kind, name);
    if (!o) {
      problems.push(`${where}: ${kind} ${name} does not exist`);
      return undefined;
    }
    const data = { ...(o.data ?? {}), ...(o.stringData ?? {}) } as Record<string, string>;
    if (kind === "Secret" && o.data) for (const k of Object.keys(o.data)) data[k] = Buffer.from(o.data[k], "base64").toString();
    return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, String(v)]));
  };
  for (const src of ct.envFrom ?? []) {
    const data = src.configMapRef ? dataOf("ConfigMap", src.configMapRef.name) : src.secretRef ? dataOf("Secret", src.secretRef.name) : undefined;
    Object.assign(env, data ?? {});
  }
  for (const e of ct.env ?? []) {
    if (e.value !== undefined) env[e.name] = String(e.value);
    else if (e.valueFrom?.secretKeyRef || e.valueFrom?.configMapKeyRef) {
      const ref = e.valueFrom.secretKeyRef ?? e.valueFrom.configMapKeyRef;
      const data = dataOf(e.valueFrom.secretKeyRef ? "Secret" : "ConfigMap", ref.name);
      if (data && data[ref.key] === undefined) problems.push(`${where}: ${e.name} refers to missing key ${ref.key} of ${ref.name}`);
      else if (data) env[e.name] = data[ref.key];
    } else problems.push(`${where}: ${e.name} has a value source the checks do not know`);
  }
  return env;
}

/** Secrets must come from a Secret object, never written into a ConfigMap or env value. */
function secretsOutsideSecrets(objs: K8sObject[], ct: Container, where: string): string[] {
  const out: string[] = [];
  const names = new Set<string>([...GATEWAY_SECRETS]);
  for (const src of ct.envFrom ?? []) {
    const cm = src.configMapRef && find(objs, "ConfigMap", src.configMapRef.name);
    for (const k of Object.keys(cm?.data ?? {})) if (names.has(k)) out.push(`${where}: ${k} comes from ConfigMap ${cm!.metadata.name}`);
  }
  for (const e of ct.env ?? []) if (names.has(e.name) && !e.valueFrom?.secretKeyRef) out.push(`${where}: ${e.name} is not taken from a Secret`);
  return out;
}

const portNumber = (ct: Container, port: string | number): number | undefined =>
  typeof port === "number" ? port : ct.ports?.find((p: { name?: string }) => p.name === port)?.containerPort;

export function checkK8s(objs: K8sObject[]): { problems: string[]; probes: Probe[] } {
  const problems: string[] = [];
  const probes: Probe[] = [];
  const deployments = byKind(objs, "Deployment");
  const roleOfDeployment = new Map<string, "gateway" | "product">();
  const portOfDeployment = new Map<string, number>();

  const namespaces = new Set(objs.filter((o) => o.kind !== "Namespace").map((o) => o.metadata.namespace));
  if (namespaces.size !== 1 || namespaces.has(undefined)) problems.push(`k8s: objects are spread over namespaces ${[...namespaces].join(", ")}`);

  for (const d of deployments) {
    const where = `k8s Deployment ${d.metadata.name}`;
    if (!matches(d.spec?.selector?.matchLabels, podLabels(d))) problems.push(`${where}: selector does not match its pod labels`);
    const containers: Container[] = d.spec?.template?.spec?.containers ?? [];
    if (containers.length !== 1) problems.push(`${where}: expected one container, found ${containers.length}`);
    for (const ct of containers) {
      const cwhere = `${where} container ${ct.name}`;
      const env = containerEnv(objs, ct, cwhere, problems);
      const role = env.PRODUCT_URL ? "gateway" : "product";
      roleOfDeployment.set(d.metadata.name, role);
      const { problems: envProblems, config } = checkEnv(cwhere, env);
      problems.push(...envProblems, ...secretsOutsideSecrets(objs, ct, cwhere));
      problems.push(...missingSecrets(cwhere, env, role === "gateway" ? GATEWAY_SECRETS : PRODUCT_SECRETS));
      if (!config) continue;
      if (role === "gateway") problems.push(...proxyTrustProblems(cwhere, config));

      const ports: number[] = (ct.ports ?? []).map((p: { containerPort: number }) => p.containerPort);
      if (ports.length !== 1 || ports[0] !== config.PORT) problems.push(`${cwhere}: containerPort ${ports.join(",")} is not PORT ${config.PORT}`);
      portOfDeployment.set(d.metadata.name, config.PORT);

      const wanted: Record<string, string> = { readinessProbe: "/readyz", livenessProbe: "/healthz" };
      for (const kind of ["startupProbe", "livenessProbe", "readinessProbe"]) {
        const probe = ct[kind];
        if (!probe) {
          if (kind !== "startupProbe") problems.push(`${cwhere}: no ${kind}`);
          continue;
        }
        const get = probe.httpGet;
        if (!get) {
          problems.push(`${cwhere}: ${kind} is not an HTTP GET`);
          continue;
        }
        if (portNumber(ct, get.port) !== config.PORT) problems.push(`${cwhere}: ${kind} port ${get.port} is not PORT ${config.PORT}`);
        if (wanted[kind] && get.path !== wanted[kind]) problems.push(`${cwhere}: ${kind} path ${get.path} is not ${wanted[kind]}`);
        probes.push({ where: `${cwhere} ${kind}`, role, path: get.path });
      }

      // The grace period starts before the preStop hook, so the hook's sleep comes off it.
      const grace = d.spec.template.spec.terminationGracePeriodSeconds ?? 30;
      const preStop = ct.lifecycle?.preStop?.exec?.command ?? [];
      const sleep = preStop[0] === "sleep" ? Number(preStop[1]) : 0;
      if (grace - sleep <= config.DEADLINE_MS / 1000) {
        problems.push(`${where}: terminationGracePeriodSeconds ${grace} minus the ${sleep}s preStop does not exceed the ${config.DEADLINE_MS / 1000}s deadline`);
      }

      const req = ct.resources?.requests;
      if (!req?.cpu || !req?.memory || !ct.resources?.limits?.memory) problems.push(`${cwhere}: cpu/memory requests or memory limit missing`);
      if (role === "product" && req?.cpu && cpuCores(req.cpu) !== config.THREADS_PER_SESSION) {
        problems.push(`${cwhere}: cpu request ${req.cpu} is not THREADS_PER_SESSION ${config.THREADS_PER_SESSION}`);
      }
    }
  }

  // Services select existing pods and target a real container port.
  const services = byKind(objs, "Service");
  for (const s of services) {
    const where = `k8s Service ${s.metadata.name}`;
    const targets = deployments.filter((d) => matches(s.spec?.selector, podLabels(d)));
    if (targets.length !== 1) problems.push(`${where}: selects ${targets.length} Deployments, expected 1`);
    for (const p of s.spec?.ports ?? []) {
      const target = p.targetPort ?? p.port;
      for (const d of targets) {
        const ct = d.spec.template.spec.containers[0];
        if (portNumber(ct, target) === undefined || !ct.ports.some((cp: { containerPort: number }) => cp.containerPort === portNumber(ct, target))) {
          problems.push(`${where}: targetPort ${target} is not a port of ${d.metadata.name}`);
        }
      }
    }
  }

  // Gateways' PRODUCT_URL names the product Service and its port.
  for (const d of deployments.filter((x) => roleOfDeployment.get(x.metadata.name) === "gateway")) {
    const env = containerEnv(objs, d.spec.template.spec.containers[0], "", []);
    const url = new URL(env.PRODUCT_URL);
    const svcName = url.hostname.split(".")[0];
    const svc = find(objs, "Service", svcName);
    const where = `k8s Deployment ${d.metadata.name} PRODUCT_URL ${env.PRODUCT_URL}`;
    if (!svc) {
      problems.push(`${where}: no Service ${svcName}`);
      continue;
    }
    const host = url.hostname.split(".");
    if (host.length > 1 && host[1] !== svc.metadata.namespace) problems.push(`${where}: namespace ${host[1]} is not ${svc.metadata.namespace}`);
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    const sp = (svc.spec.ports ?? []).find((p: { port: number }) => p.port === port);
    if (!sp) problems.push(`${where}: Service ${svcName} has no port ${port}`);
    const target = deployments.find((x) => matches(svc.spec.selector, podLabels(x)));
    if (!target || roleOfDeployment.get(target.metadata.name) !== "product") problems.push(`${where}: Service ${svcName} does not select the product pods`);
    else if (sp && portNumber(target.spec.template.spec.containers[0], sp.targetPort ?? sp.port) !== portOfDeployment.get(target.metadata.name)) {
      problems.push(`${where}: Service port ${port} does not lead to the product's PORT`);
    }
  }

  // The HPA scales the product Deployment on CPU.
  const hpas = byKind(objs, "HorizontalPodAutoscaler");
  if (hpas.length === 0) problems.push("k8s: no HorizontalPodAutoscaler");
  for (const h of hpas) {
    const where = `k8s HPA ${h.metadata.name}`;
    const ref = h.spec?.scaleTargetRef ?? {};
    const target = ref.kind === "Deployment" ? find(objs, "Deployment", ref.name) : undefined;
    if (!target || roleOfDeployment.get(target.metadata.name) !== "product") problems.push(`${where}: targets ${ref.kind} ${ref.name}, not the product Deployment`);
    if (target?.spec?.replicas !== undefined) problems.push(`${where}: ${ref.name} also fixes spec.replicas, which every apply would reset`);
    const cpu = (h.spec?.metrics ?? []).some((m: any) => m.type === "Resource" && m.resource?.name === "cpu");
    if (!cpu) problems.push(`${where}: does not scale on CPU`);
  }

  // Each PDB covers exactly one Deployment.
  const pdbs = byKind(objs, "PodDisruptionBudget");
  for (const d of deployments) {
    if (!pdbs.some((p) => matches(p.spec?.selector?.matchLabels, podLabels(d)))) problems.push(`k8s Deployment ${d.metadata.name}: no PodDisruptionBudget selects it`);
  }
  for (const p of pdbs) {
    const n = deployments.filter((d) => matches(p.spec?.selector?.matchLabels, podLabels(d))).length;
    if (n !== 1) problems.push(`k8s PDB ${p.metadata.name}: selects ${n} Deployments, expected 1`);
  }
  return { problems, probes };
}

/** "2" → 2, "500m" → 0.5. */
export function cpuCores(q: string | number): number {
  const s = String(q);
  return s.endsWith("m") ? Number(s.slice(0, -1)) / 1000 : Number(s);
}
