// `pixeldrop remove`: argument errors, folder expansion, output naming, a real run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, copyFile, mkdir, writeFile, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseRemoveArgs } from "../../src/cli/args.ts";
import { planOutputs } from "../../src/cli/output-names.ts";
import { main } from "../../src/cli/main.ts";
import { FIXTURES } from "../support/harness.ts";
import { DEFAULT_MODEL } from "../support/default-model.ts";
import { FAMILY_GRAPHS, familyGraph } from "../support/family-onnx.ts";

test("usage errors exit 2 with a message", async () => {
  const lines: string[] = [];
  assert.equal(await main([], (s) => lines.push(s)), 2);
  assert.equal(await main(["remove"], (s) => lines.push(s)), 2);
  assert.equal(await main(["remove", "x.jpg", "--size", "huge"], (s) => lines.push(s)), 2);
  assert.ok(lines.some((l) => l.includes("--size must be one of")));
  assert.equal(await main(["paint", "x"], (s) => lines.push(s)), 2);
});

test("arguments parse with defaults", () => {
  const r = parseRemoveArgs(["remove", "a.jpg", "dir", "-o", "out", "--size", "preview", "--threads", "2"]);
  assert.ok(r.ok);
  assert.deepEqual(r.ok && r.args, {
    inputs: ["a.jpg", "dir"],
    outDir: "out",
    size: "preview",
    model: DEFAULT_MODEL,
    backend: "auto",
    threads: 2,
    skipExisting: false,
    concurrency: 1,
  });
  const d = parseRemoveArgs(["remove", "a.jpg"]);
  assert.ok(d.ok && d.args.outDir === "cutouts" && d.args.size === undefined);
});

test("output is <name without extension>.png in the output folder", () => {
  assert.deepEqual(planOutputs(["photos/cat.photo.JPG"], "out"), [{ file: "photos/cat.photo.JPG", out: join("out", "cat.photo.png") }]);
});

test("a folder is processed: one PNG per image, bad files reported, exit 1 when any failed", async () => {
  const dir = await mkdtemp(join(tmpdir(), "pd-cli-"));
  const inDir = join(dir, "in");
  await mkdir(inDir);
  await copyFile(fileURLToPath(new URL("photos/chelsea.png", FIXTURES)), join(inDir, "chelsea.png"));
  await writeFile(join(inDir, "broken.jpg"), new Uint8Array([0xff, 0xd8, 0xff, 0x00, 1, 2, 3]));
  await writeFile(join(inDir, "notes.txt"), "not an image");
  const lines: string[] = [];
  const code = await main(["remove", inDir, "-o", join(dir, "out"), "--size", "preview"], (s) => lines.push(s));
  assert.equal(code, 1, lines.join("\n"));
  const out = await readdir(join(dir, "out"));
  assert.deepEqual(out, ["chelsea.png"]);
  const png = await readFile(join(dir, "out", "chelsea.png"));
  assert.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  assert.ok(lines.some((l) => l.startsWith("failed:") && l.includes("broken.jpg")));
  assert.ok(lines.some((l) => l.includes("1 of 2 images written")));
});

test("`pixeldrop assemble` with no names readies the default model and names it", async () => {
  const lines: string[] = [];
  assert.equal(await main(["assemble"], (s) => lines.push(s)), 0, lines.join("\n"));
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.match(lines[0]!, new RegExp(`^pixeldrop: ${DEFAULT_MODEL} ready in `));
});

test("--model FILE --card NAME|FILE: a model of a known family runs by its card; a wrong card stops before any image", async () => {
  const dir = await mkdtemp(join(tmpdir(), "pd-cli-card-"));
  const model = join(dir, "tiny-birefnet-shaped.onnx");
  await writeFile(model, familyGraph(FAMILY_GRAPHS.birefnet)); // 32 x 32
  await writeFile(join(dir, "card.json"), JSON.stringify({ preset: "birefnet", inputSize: [32, 32] }));
  const photo = join(dir, "photo.png");
  await copyFile(fileURLToPath(new URL("photos/chelsea.png", FIXTURES)), photo);
  const lines: string[] = [];
  const ok = await main(["remove", photo, "-o", join(dir, "out"), "--model", model, "--card", join(dir, "card.json"), "--backend", "wasm"], (s) => lines.push(s));
  assert.equal(ok, 0, lines.join("\n"));
  assert.deepEqual(await readdir(join(dir, "out")), ["photo.png"]);
  lines.length = 0;
  assert.equal(await main(["remove", photo, "-o", join(dir, "out2"), "--model", model, "--card", "birefnet"], (s) => lines.push(s)), 1);
  assert.ok(lines.some((l) => /does not match its card \(preset birefnet\): inputSize \[1024, 1024\]/.test(l)), lines.join("\n"));
  const remote = parseRemoveArgs(["remove", "a.jpg", "--card", "birefnet", "--api-key", "k"]);
  assert.ok(!remote.ok && /--card only apply without an API key/.test(remote.message));
  assert.deepEqual(parseRemoveArgs(["remove", "a.jpg", "--model", "m.onnx", "--card", "u2net"]).ok && "ok", "ok");
});
