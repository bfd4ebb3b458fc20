// The client half of deploy/image-check.sh, run on the host against the image's service:
// waits for /readyz (timed from the moment the script started the image's CMD), then, as an
// operator, creates an org with credit, an app and a live key, and sends one paid 12 MP
// removal (a 4242 x 2828 JPEG made from the fixture photo, as the benchmarks make it).
// Prints one JSON line; exits non-zero when the service never got ready or the call failed.
//
//   node --import tsx deploy/image-call.ts --base http://127.0.0.1:PORT --token OPERATOR_TOKEN \
//        --started-ms <epoch ms of the start> [--ready-timeout-s 300] [--pid <service pid>]
import { parseArgs } from "node:util";
import { benchInputs } from "../bench/inputs.ts";

const { values: opt } = parseArgs({
  options: {
    base: { type: "string" },
    token: { type: "string" },
    "started-ms": { type: "string" },
    "ready-timeout-s": { type: "string", default: "300" },
    pid: { type: "string" },
  },
});
if (!opt.base || !opt.token || !opt["started-ms"]) throw new Error("--base, --token and --started-ms are required");
const base = opt.base;
const started = Number(opt["started-ms"]);

// Made before waiting, so the encode does not compete with the service's start on the timing.
const [big] = await benchInputs();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function readyAfterMs(): Promise<number> {
  const deadline = started + Number(opt["ready-timeout-s"]) * 1000;
  for (;;) {
    const ok = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
    if (ok) return Date.now() - started;
    if (Date.now() > deadline) throw new Error(`/readyz not ready after ${opt["ready-timeout-s"]} s`);
    if (opt.pid && !alive(Number(opt.pid))) throw new Error("the service exited before it was ready");
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function admin(path: string, body: unknown): Promise<Record<string, string>> {
  const res = await fetch(`${base}/admin/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${opt.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, string>;
  if (!res.ok) throw new Error(`POST /admin/v1${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

const readyMs = await readyAfterMs();
const org = await admin("/orgs", { email: `image-check-${crypto.randomUUID()}@example.com` });
await admin(`/orgs/${org.orgId}/credit`, { amountKrw: 10_000 });
const app = await admin(`/orgs/${org.orgId}/apps`, { name: "image-check", productEnabled: true });
const key = await admin(`/apps/${app.appId}/keys`, { kind: "live" });

const form = new FormData();
form.append("image_file", new Blob([big!.bytes as Uint8Array<ArrayBuffer>], { type: "image/jpeg" }), "big.jpg");
form.append("size", "full");
const t0 = Date.now();
const res = await fetch(`${base}/v1.0/removebg`, { method: "POST", headers: { "x-api-key": key.key! }, body: form });
const body = new Uint8Array(await res.arrayBuffer());
const callMs = Date.now() - t0;
const png = body.length > 8 && body[1] === 0x50 && body[2] === 0x4e && body[3] === 0x47;
console.log(
  JSON.stringify({
    readyMs,
    input: `${big!.width}x${big!.height} JPEG, ${big!.bytes.length} bytes`,
    status: res.status,
    png,
    bytes: body.length,
    callMs,
    chargedKrw: res.headers.get("x-pd-charged-krw"),
    model: res.headers.get("x-pd-model"),
  }),
);
if (res.status !== 200 || !png) {
  console.error(new TextDecoder().decode(body.subarray(0, 500)));
  process.exit(1);
}
