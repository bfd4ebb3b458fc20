// Model quality against a known answer, and model time, in one run.
//
// For every fixture photo A the fp16 model (`medium`) gives the truth: its mask of A.
// For every other photo B, the composite is A's subject (by that alpha, exactly) over B
// resized to A's size and blurred as a shallow depth of field would blur it. Each model
// cuts the composite out; its mask is scored against the truth (IoU at alpha >= 0.5, SAD,
// MSE). The models take turns on every composite, the first one rotating, so a change in
// the machine's load hits them alike; time is the mask session's run alone (the engine's
// pre- and post-processing included, no decode, resize or encode).
//
// Usage: npm run bench:quality -- [--models small,medium,… (default: every manifest model assembled)]
//          [--model name=path.onnx ...] [--photos 3] [--backend wasm|native] [--threads 2]
//          [--blur 12] [--sizes 1024,896,768,640]
// --sizes feeds each model at each of those square input sides (as `model@side`; the
// first side is the baseline), marks the side src/engine/inference/input-side.ts picks when
// the caller asks for none, and adds a table of each side's scores and whole-photo masks
// against the same model's at the first side (the masks at the photo's own resolution,
// which for these photos, all under 0.25 MP, is every tier's output size).
// --models names manifest entries; --model adds a file that is not in the manifest (fed
// like `small`), for trying quantiser variants (scripts/quantise-model.mjs) before one is chosen. Photos come from
// test/fixtures/photos (then /work/shared/fixtures/photos if present, by new name).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeImage } from "../src/engine/imaging/decode.ts";
import { resizeMask, resizeRGBA, resizeToRGB } from "../src/engine/imaging/resize.ts";
import type { RGBA } from "../src/engine/imaging/types.ts";
import { loadManifest, type ModelManifest } from "../src/engine/inference/manifest.ts";
import { createMaskSession, type MaskSession } from "../src/engine/inference/session.ts";
import { modelInputSize } from "../src/engine/inference/input-side.ts";
import { blurImage, composite, scoreMask, type MaskScore } from "./quality-score.ts";
import { median } from "./median.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const PHOTO_DIRS = [join(root, "test/fixtures/photos"), "/work/shared/fixtures/photos"];

interface Args {
  models: string[];
  extra: [string, string][];
  photos: number;
  backend: "wasm" | "native";
  threads: number;
  blur: number;
  sizes: number[];
}

function parseArgs(argv: string[], manifest: ModelManifest): Args {
  // Default: every manifest model that is assembled here.
  const assembled = Object.keys(manifest.models).filter((m) => existsSync(join(root, "models", manifest.models[m]!.file)));
  const a: Args = { models: assembled, extra: [], photos: Infinity, backend: "wasm", threads: 2, blur: 12, sizes: [] };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    if (argv[i] === "--models" && v) (a.models = v.split(",").filter(Boolean)), i++;
    else if (argv[i] === "--model" && v?.includes("=")) (a.extra.push(v.split("=", 2) as [string, string]), i++);
    else if (argv[i] === "--photos" && v) (a.photos = Number(v)), i++;
    else if (argv[i] === "--backend" && (v === "wasm" || v === "native")) (a.backend = v), i++;
    else if (argv[i] === "--threads" && v) (a.threads = Number(v)), i++;
    else if (argv[i] === "--blur" && v) (a.blur = Number(v)), i++;
    else if (argv[i] === "--sizes" && v) (a.sizes = v.split(",").map(Number)), i++;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return a;
}

async function loadPhotos(limit: number): Promise<{ name: string; image: RGBA }[]> {
  const seen = new Set<string>();
  const out: { name: string; image: RGBA }[] = [];
  for (const dir of PHOTO_DIRS) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).sort()) {
      if (!/\.(png|jpe?g|webp)$/i.test(f) || seen.has(f) || out.length >= limit) continue;
      seen.add(f);
      const d = await decodeImage(new Uint8Array(readFileSync(join(dir, f))));
      if (!d.ok) throw new Error(`${f}: ${d.title}`);
      out.push({ name: f, image: d.image });
    }
  }
  return out;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function main(): Promise<void> {
  const loaded = await loadManifest(join(root, "models/manifest.json"));
  if (!loaded.ok) throw new Error(loaded.title);
  const manifest = loaded.manifest;
  const args = parseArgs(process.argv.slice(2), manifest);
  const sessions = new Map<string, MaskSession>();
  const open = async (name: string, path: string, entry: (typeof manifest.models)[string]) =>
    sessions.set(name, await createMaskSession({ model: entry, modelPath: path, backend: args.backend, threads: args.threads, wasmDir: join(root, "wasm") }));
  for (const name of new Set(["medium", ...args.models])) {
    const entry = manifest.models[name];
    if (!entry) throw new Error(`no manifest entry "${name}"`);
    await open(name, join(root, "models", entry.file), entry);
  }
  for (const [name, path] of args.extra) {
    const sha256 = createHash("sha256").update(readFileSync(path)).digest("hex");
    await open(name, path, { ...manifest.models.small!, file: path.split("/").pop()!, sha256 });
  }
  const models = [...args.models, ...args.extra.map(([n]) => n)];
  const names = args.sizes.length ? models.flatMap((m) => args.sizes.map((s) => `${m}@${s}`)) : models;

  // `name` is a model, or model@side for a square input of that side.
  const mask = async (name: string, img: RGBA): Promise<{ mask: Uint8Array; ms: number }> => {
    const [model, side] = name.split("@") as [string, string | undefined];
    const s = sessions.get(model)!;
    const { width: W, height: H } = side ? { width: Number(side), height: Number(side) } : s.inputSize;
    const rgb = resizeToRGB(img, W, H);
    const t = performance.now();
    const m = await s.run(rgb, { width: W, height: H });
    const ms = performance.now() - t;
    return { mask: resizeMask(m, W, H, img.width, img.height), ms };
  };

  const photos = await loadPhotos(args.photos);
  const load0 = loadavg();
  for (const n of names) await mask(n, photos[0]!.image); // warm-up: first runs allocate
  const truths = new Map<string, Uint8Array>();
  for (const p of photos) truths.set(p.name, (await mask("medium", p.image)).mask);

  const scores = new Map<string, MaskScore[]>(names.map((n) => [n, []]));
  const times = new Map<string, number[]>(names.map((n) => [n, []]));
  let k = 0;
  for (const a of photos) {
    for (const b of photos) {
      if (a === b) continue;
      const bg = blurImage(resizeRGBA(b.image, a.image.width, a.image.height), args.blur);
      const comp = composite(a.image, truths.get(a.name)!, bg);
      const order = names.map((_, i) => names[(i + k) % names.length]!);
      k++;
      for (const n of order) {
        const r = await mask(n, comp);
        scores.get(n)!.push(scoreMask(r.mask, truths.get(a.name)!));
        times.get(n)!.push(r.ms);
      }
    }
  }
  // Whole photos: each model's mask of the original photo against medium's, the check
  // test/assets/int8-masks.test.ts makes (there is no composite edge here: this shows
  // drift inside the subject and the background that the composites do not).
  const whole = new Map<string, { iou: number; meanAbs: number }[]>(names.map((n) => [n, []]));
  // With --sizes, also each side's mask against the same model's at the first side.
  const againstFirst = new Map<string, { iou: number; meanAbs: number }[]>(names.map((n) => [n, []]));
  for (const p of photos) {
    const own = new Map<string, Uint8Array>();
    for (const n of names) {
      const m = (await mask(n, p.image)).mask;
      own.set(n, m);
      const s = scoreMask(m, truths.get(p.name)!);
      whole.get(n)!.push({ iou: s.iou, meanAbs: (s.sad * 1000) / (p.image.width * p.image.height) });
      const first = own.get(`${n.split("@")[0]}@${args.sizes[0]}`);
      if (args.sizes.length && first) {
        const f = scoreMask(m, first);
        againstFirst.get(n)!.push({ iou: f.iou, meanAbs: (f.sad * 1000) / (p.image.width * p.image.height) });
      }
    }
  }
  const load1 = loadavg();

  const base = names[0]!;
  const count = scores.get(base)!.length;
  console.log(`\n${count} composites from ${photos.length} photos (${photos.map((p) => p.name).join(", ")}); ${args.backend}, ${args.threads} threads; blur radius ${args.blur}`);
  console.log(`load average (1 min) ${load0[0]!.toFixed(1)} at start, ${load1[0]!.toFixed(1)} at end; ${new Date().toISOString()}\n`);
  // The side the engine's rule feeds the model when the caller asks for none.
  const ruleSide = modelInputSize(sessions.get(models[0]!)!).width;
  const picked = (n: string) => (args.sizes.length && n.endsWith(`@${ruleSide}`) ? " ← rule" : "");
  console.log(`| model | mean IoU | mean SAD | mean MSE ×10³ | median run (ms) | time / ${base} (median of paired ratios) |`);
  console.log("|---|---|---|---|---|---|");
  for (const n of names) {
    const s = scores.get(n)!;
    const t = times.get(n)!;
    const ratios = t.map((x, i) => x / times.get(base)![i]!);
    console.log(
      `| ${n}${picked(n)} | ${mean(s.map((x) => x.iou)).toFixed(4)} | ${mean(s.map((x) => x.sad)).toFixed(2)} | ${mean(s.map((x) => x.mse)).toFixed(3)} | ${Math.round(median(t))} | ${median(ratios).toFixed(3)} |`,
    );
  }
  if (args.sizes.length) {
    console.log(`\nEach side's composite scores against the same model's at ${args.sizes[0]} (ΔIoU, SAD ratio), and its masks of the ${photos.length} photos against that model's at ${args.sizes[0]} (IoU at alpha >= 0.5, mean abs. Δalpha on a 0–1 scale):\n`);
    console.log(`| model@side | ΔIoU on composites | SAD / ${args.sizes[0]}'s | whole photos: mean IoU | worst IoU | mean abs. Δalpha |`);
    console.log("|---|---|---|---|---|---|");
    for (const n of names) {
      const first = `${n.split("@")[0]}@${args.sizes[0]}`;
      const [s, f] = [scores.get(n)!, scores.get(first)!];
      const w = againstFirst.get(n)!;
      const dIou = mean(s.map((x) => x.iou)) - mean(f.map((x) => x.iou));
      const sadRatio = mean(s.map((x) => x.sad)) / mean(f.map((x) => x.sad));
      console.log(
        `| ${n}${picked(n)} | ${dIou >= 0 ? "+" : ""}${dIou.toFixed(4)} | ${sadRatio.toFixed(3)} | ${mean(w.map((x) => x.iou)).toFixed(4)} | ${Math.min(...w.map((x) => x.iou)).toFixed(4)} | ${mean(w.map((x) => x.meanAbs)).toFixed(4)} |`,
      );
    }
  }
  console.log(`\nThe ${photos.length} photos themselves, each model's mask against medium's (IoU at alpha >= 0.5; mean absolute difference of alpha on a 0–1 scale):\n`);
  console.log("| model | mean IoU with medium | mean abs. Δalpha | worst photo's mean abs. Δalpha |");
  console.log("|---|---|---|---|");
  for (const n of names) {
    const w = whole.get(n)!;
    console.log(`| ${n} | ${mean(w.map((x) => x.iou)).toFixed(4)} | ${mean(w.map((x) => x.meanAbs)).toFixed(4)} | ${Math.max(...w.map((x) => x.meanAbs)).toFixed(4)} |`);
  }
  for (const s of sessions.values()) await s.dispose();
}

await main();
