// `pixeldrop remove` in remote mode (--api-key / PD_API_KEY) against a real service
// process: images go through the client, failures name the error code and request ID,
// the key is never printed, and the exit codes are those of a local run.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_BASE_URL, parseRemoveArgs } from "../../src/cli/args.ts";
import { main } from "../../src/cli/main.ts";
import { startService, TINY_PNG, type Service } from "../client/setup.ts";
import { setUpCustomer } from "../support/server-process.ts";

let svc: Service;
before(async () => {
  svc = await startService();
});
after(async () => {
  await svc?.close();
});

async function folder(names: Record<string, Uint8Array>): Promise<{ inDir: string; outDir: string }> {
  const dir = await mkdtemp(join(tmpdir(), "pd-cli-remote-"));
  const inDir = join(dir, "in");
  await mkdir(inDir);
  for (const [name, bytes] of Object.entries(names)) await writeFile(join(inDir, name), bytes);
  return { inDir, outDir: join(dir, "out") };
}

const BROKEN_JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0x00, 1, 2, 3]);
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47];

test("--api-key sends each image to the service: cut-outs written, a failure names code and request ID, exit 1", async () => {
  const { inDir, outDir } = await folder({ "tiny.png": TINY_PNG, "broken.jpg": BROKEN_JPEG });
  const key = svc.customer.liveKey;
  const lines: string[] = [];
  const code = await main(["remove", inDir, "-o", outDir, "--size", "preview", "--api-key", key, "--base-url", svc.url], (s) => lines.push(s), {});
  assert.equal(code, 1, lines.join("\n"));
  assert.deepEqual(await readdir(outDir), ["tiny.png"]);
  assert.deepEqual([...(await readFile(join(outDir, "tiny.png"))).subarray(0, 4)], PNG_SIGNATURE);
  const failed = lines.filter((l) => l.startsWith("failed:"));
  assert.equal(failed.length, 1, lines.join("\n"));
  assert.match(failed[0]!, /broken\.jpg: [a-z_]+: .*\(HTTP 4\d\d, request req_[0-9a-z]{26}\)/);
  assert.ok(lines.some((l) => l.includes("1 of 2 images written") && l.includes(`service ${svc.url}, charged 22 KRW`)), lines.join("\n"));
  assert.ok(!lines.some((l) => l.includes(key)), "the key is never printed");
});

test("PD_API_KEY and PD_BASE_URL come from the environment; exit 0 when every file worked", async () => {
  const { inDir, outDir } = await folder({ "a.png": TINY_PNG, "b.png": TINY_PNG });
  const lines: string[] = [];
  const env = { PD_API_KEY: svc.customer.testKey, PD_BASE_URL: svc.url };
  const code = await main(["remove", inDir, "-o", outDir], (s) => lines.push(s), env);
  assert.equal(code, 0, lines.join("\n"));
  assert.deepEqual(await readdir(outDir), ["a.png", "b.png"]);
  assert.ok(lines.some((l) => l.includes("2 of 2 images written") && l.includes(`service ${svc.url})`)), lines.join("\n"));
  assert.ok(!lines.some((l) => l.includes(svc.customer.testKey)));
});

test("a refused key stops the run after the first file: one request reaches the service", async () => {
  const { inDir, outDir } = await folder({ "1.png": TINY_PNG, "2.png": TINY_PNG, "3.png": TINY_PNG });
  const key = "pd_live_notarealkey000000000000000000";
  const lines: string[] = [];
  svc.front.script("forward");
  const code = await main(["remove", inDir, "-o", outDir, "--api-key", key, "--base-url", svc.front.url], (s) => lines.push(s), {});
  assert.equal(code, 1);
  assert.equal(svc.front.count, 1);
  const failed = lines.filter((l) => l.startsWith("failed:"));
  assert.equal(failed.length, 3, lines.join("\n"));
  assert.match(failed[0]!, /1\.png: invalid_api_key: .*HTTP 401, request req_/);
  assert.match(failed[1]!, /2\.png: not sent \(invalid_api_key\)/);
  assert.ok(lines.some((l) => l.includes("0 of 3 images written")));
  assert.ok(!lines.some((l) => l.includes(key)));
});

test("the answer is lost after the charge: the CLI sends the image again with the same Idempotency-Key and is charged once", async () => {
  const { inDir, outDir } = await folder({ "tiny.png": TINY_PNG });
  const c = await setUpCustomer(svc.admin, { creditKrw: 1000 });
  const lines: string[] = [];
  svc.front.script("forward-cut", "forward");
  const code = await main(["remove", inDir, "-o", outDir, "--size", "preview", "--api-key", c.liveKey, "--base-url", svc.front.url], (s) => lines.push(s), {});
  assert.equal(code, 0, lines.join("\n"));
  assert.deepEqual(await readdir(outDir), ["tiny.png"]);
  const keys = svc.front.idempotencyKeys;
  assert.equal(keys.length, 2, "sent again after the broken answer");
  assert.match(keys[0] ?? "", /^[0-9a-f-]{36}$/);
  assert.equal(keys[1], keys[0], "the same key on the resend");
  const org = await svc.admin("GET", `/orgs/${c.orgId}`);
  assert.equal(org.json.balanceKrw, 1000 - 22, "charged once");
});

test("remote-mode arguments: defaults, the flag over the environment, and usage errors", () => {
  const r = parseRemoveArgs(["remove", "a.png", "--api-key", "pd_test_flag"], { PD_API_KEY: "pd_test_env" });
  assert.ok(r.ok);
  assert.deepEqual(r.ok && r.args.remote, { apiKey: "pd_test_flag", baseUrl: DEFAULT_BASE_URL });
  const e = parseRemoveArgs(["remove", "a.png"], { PD_API_KEY: "pd_test_env", PD_BASE_URL: "https://pd.example" });
  assert.deepEqual(e.ok && e.args.remote, { apiKey: "pd_test_env", baseUrl: "https://pd.example" });
  const local = parseRemoveArgs(["remove", "a.png"], { PD_API_KEY: "" });
  assert.ok(local.ok && local.args.remote === undefined);

  const usage = (argv: string[], env = {}) => {
    const p = parseRemoveArgs(["remove", "a.png", ...argv], env);
    return p.ok ? "ok" : p.message;
  };
  assert.match(usage(["--api-key", "k", "--model", "medium"]), /--model only apply without an API key/);
  assert.match(usage(["--threads", "2"], { PD_API_KEY: "k" }), /--threads only apply/);
  assert.match(usage(["--api-key", "k", "--base-url", "ftp://x"]), /--base-url must be/);
  assert.match(usage(["--base-url", "http://x"]), /needs an API key/);
  assert.match(usage(["--api-key", ""]), /--api-key is empty/);
});

test("a usage error in remote mode exits 2 and does not print the key", async () => {
  const lines: string[] = [];
  assert.equal(await main(["remove", "x.png", "--api-key", "pd_live_secret123", "--backend", "wasm"], (s) => lines.push(s), {}), 2);
  assert.ok(!lines.some((l) => l.includes("pd_live_secret123")));
});
