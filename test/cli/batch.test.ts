// `pixeldrop remove` for real batches: the naming rule when inputs share a
// name, --skip-existing, --concurrency (remote mode), a summary that lists every
// failure with its reason and request ID, and --channels / --bg-color in both modes.
// Remote mode runs against a real service process with the stub model; the local
// runs use the real small model on one 64 × 48 image each.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRemoveArgs } from "../../src/cli/args.ts";
import { runBatch } from "../../src/cli/batch.ts";
import { main } from "../../src/cli/main.ts";
import { writeTinyModel } from "../support/tiny-onnx.ts";
import { planOutputs } from "../../src/cli/output-names.ts";
import { decodeImage } from "../../src/engine/imaging/index.ts";
import { startService, TINY_PNG, type Service } from "../client/setup.ts";

let svc: Service;
before(async () => {
  svc = await startService();
});
after(async () => {
  await svc?.close();
});

const BROKEN_JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0x00, 1, 2, 3]);

async function tree(files: Record<string, Uint8Array>): Promise<{ dir: string; outDir: string }> {
  const dir = await mkdtemp(join(tmpdir(), "pd-cli-batch-"));
  for (const [path, bytes] of Object.entries(files)) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), bytes);
  }
  return { dir, outDir: join(dir, "out") };
}

async function run(argv: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await main(["remove", ...argv, "--api-key", svc.customer.liveKey, "--base-url", svc.front.url], (s) => lines.push(s), {});
  return { code, lines };
}

async function pixels(path: string) {
  const d = await decodeImage(new Uint8Array(await readFile(path)));
  assert.ok(d.ok, path);
  return d.image;
}

describe("output names", () => {
  test("the rule: plain name when unique, extension kept when shared, then -2, -3; case-blind; a repeated path once", () => {
    const plan = planOutputs(["in/photo.jpg", "in/photo.webp", "in/cat.png", "a/dog.jpg", "b/dog.jpg", "c/DOG.JPG", "in/cat.png"], "out");
    assert.deepEqual(
      plan.map((p) => p.out),
      ["photo.jpg.png", "photo.webp.png", "cat.png", "dog.jpg.png", "dog.jpg-2.png", "DOG.JPG-3.png"].map((n) => join("out", n)),
    );
  });

  test("photo.jpg and photo.webp through the service: both kept, nothing overwritten", async () => {
    const { dir, outDir } = await tree({ "in/photo.png": TINY_PNG, "in/photo.webp": TINY_PNG, "in/solo.png": TINY_PNG });
    svc.front.script("forward");
    const { code, lines } = await run([join(dir, "in"), "-o", outDir, "--size", "preview"]);
    assert.equal(code, 0, lines.join("\n"));
    assert.deepEqual((await readdir(outDir)).sort(), ["photo.png.png", "photo.webp.png", "solo.png"]);
  });
});

describe("resuming and concurrency", () => {
  test("--skip-existing sends only what is missing and says how many it skipped", async () => {
    const { dir, outDir } = await tree({ "in/a.png": TINY_PNG, "in/b.png": TINY_PNG, "in/c.png": TINY_PNG });
    svc.front.script("forward");
    assert.equal((await run([join(dir, "in"), "-o", outDir, "--size", "preview"])).code, 0);
    assert.equal(svc.front.count, 3);
    await rm(join(outDir, "b.png"));
    svc.front.script("forward");
    const { code, lines } = await run([join(dir, "in"), "-o", outDir, "--size", "preview", "--skip-existing"]);
    assert.equal(code, 0, lines.join("\n"));
    assert.equal(svc.front.count, 1, "only b.png was sent");
    assert.ok(lines.some((l) => l.startsWith("skipped 2 ")), lines.join("\n"));
    assert.ok(lines.some((l) => l.includes("1 of 3 images written")), lines.join("\n"));
    assert.deepEqual((await readdir(outDir)).sort(), ["a.png", "b.png", "c.png"]);
  });

  test("--concurrency 2: every file done, failures listed in input order with reason and request ID", async () => {
    const { dir, outDir } = await tree({ "in/1.png": TINY_PNG, "in/2.jpg": BROKEN_JPEG, "in/3.png": TINY_PNG, "in/4.jpg": BROKEN_JPEG, "in/5.png": TINY_PNG });
    svc.front.script("forward");
    const { code, lines } = await run([join(dir, "in"), "-o", outDir, "--size", "preview", "--concurrency", "2"]);
    assert.equal(code, 1);
    assert.equal(svc.front.count, 5);
    assert.deepEqual((await readdir(outDir)).sort(), ["1.png", "3.png", "5.png"]);
    const failed = lines.filter((l) => l.startsWith("failed:"));
    assert.equal(failed.length, 2, lines.join("\n"));
    assert.match(failed[0]!, /2\.jpg: invalid_parameter: .*\(HTTP 400, request req_[0-9a-z]{26}\)/);
    assert.match(failed[1]!, /4\.jpg: invalid_parameter: .*\(HTTP 400, request req_[0-9a-z]{26}\)/);
    assert.ok(lines.some((l) => l === "2 failed (listed above)"), lines.join("\n"));
    assert.ok(lines.some((l) => l.includes("3 of 5 images written")));
  });

  test("runBatch keeps at most N files in flight", async () => {
    const items = Array.from({ length: 7 }, (_, i) => ({ file: "/dev/null", out: join(tmpdir(), `pd-never-${i}-${crypto.randomUUID()}.png`) }));
    let inFlight = 0;
    let most = 0;
    let started = 0;
    // Each call waits until 3 are in flight (or the last ones have started), so overlap is certain.
    let waiting: (() => void)[] = [];
    const report = await runBatch(
      items,
      {
        async remove() {
          most = Math.max(most, ++inFlight);
          started++;
          await new Promise<void>((r) => {
            waiting.push(r);
            if (inFlight === 3 || started === items.length) {
              for (const w of waiting) w();
              waiting = [];
            }
          });
          inFlight--;
          return { ok: false, message: "scripted" };
        },
        describe: () => "",
        close: async () => {},
      },
      { concurrency: 3, skipExisting: false },
    );
    assert.equal(most, 3);
    assert.equal(report.failures.length, 7);
  });
});

describe("--channels and --bg-color", () => {
  test("remote: alpha gives the greyscale mask, bg-color an opaque result over the colour", async () => {
    const { dir, outDir } = await tree({ "in/x.png": TINY_PNG });
    svc.front.script("forward");
    assert.equal((await run([join(dir, "in", "x.png"), "-o", join(outDir, "rgba")])).code, 0);
    assert.equal((await run([join(dir, "in", "x.png"), "-o", join(outDir, "alpha"), "--channels", "alpha"])).code, 0);
    assert.equal((await run([join(dir, "in", "x.png"), "-o", join(outDir, "bg"), "--bg-color", "#81d4fa"])).code, 0);
    const rgba = await pixels(join(outDir, "rgba", "x.png"));
    const alpha = await pixels(join(outDir, "alpha", "x.png"));
    for (let p = 0; p < rgba.width * rgba.height; p++) assert.equal(alpha.data[p * 4], rgba.data[p * 4 + 3]);
    const bg = await pixels(join(outDir, "bg", "x.png"));
    assert.deepEqual([...bg.data.subarray(0, 4)], [0x81, 0xd4, 0xfa, 255]);
  });

  test("local: the same options reach the pipeline", async () => {
    const { dir, outDir } = await tree({ "in/x.png": TINY_PNG });
    const lines: string[] = [];
    // The tiny model of IS-Net's shape: the options' effect does not depend on the model
    // (test/cli/cli.test.ts cuts a photo with the real one).
    const tiny = writeTinyModel();
    const local = ["--backend", "wasm", "--model", tiny.path];
    try {
      assert.equal(await main(["remove", join(dir, "in", "x.png"), "-o", join(outDir, "alpha"), "--channels", "alpha", ...local], (s) => lines.push(s), {}), 0, lines.join("\n"));
      assert.equal(await main(["remove", join(dir, "in", "x.png"), "-o", join(outDir, "bg"), "--bg-color", "red", ...local], (s) => lines.push(s), {}), 0, lines.join("\n"));
    } finally {
      tiny.remove();
    }
    const alphaPng = await readFile(join(outDir, "alpha", "x.png"));
    assert.equal(alphaPng[25], 0, "greyscale PNG");
    const bg = await pixels(join(outDir, "bg", "x.png"));
    for (let p = 0; p < bg.width * bg.height; p++) assert.equal(bg.data[p * 4 + 3], 255, "opaque over red");
  });

  test("usage errors: bad --channels, --bg-color, --concurrency, --input-side; --concurrency or --input-side with a key", () => {
    const usage = (argv: string[], env = {}) => {
      const p = parseRemoveArgs(["remove", "a.png", ...argv], env);
      return p.ok ? "ok" : p.message;
    };
    assert.match(usage(["--channels", "rgb"]), /--channels must be one of rgba, alpha/);
    assert.match(usage(["--bg-color", "#12345"]), /--bg-color must be/);
    assert.match(usage(["--bg-color", "nocolour"], { PD_API_KEY: "k" }), /--bg-color must be/);
    assert.match(usage(["--concurrency", "0"], { PD_API_KEY: "k" }), /--concurrency must be 1\.\.16/);
    assert.match(usage(["--concurrency", "2"]), /--concurrency needs an API key/);
    assert.equal(usage(["--concurrency", "4", "--channels", "alpha", "--bg-color", "81d4fa77", "--skip-existing"], { PD_API_KEY: "k" }), "ok");
    assert.match(usage(["--input-side", "0"]), /--input-side must be a positive integer/);
    assert.match(usage(["--input-side", "7.5"]), /--input-side must be a positive integer/);
    assert.match(usage(["--input-side", "768"], { PD_API_KEY: "k" }), /--input-side only apply without an API key/);
    const local = parseRemoveArgs(["remove", "a.png", "--input-side", "768"]);
    assert.ok(local.ok && local.args.inputSide === 768);
  });
});
