// The library under `deno test` with its sanitizers on (ops, resources, exit): the built
// package (dist/, as `npm run build` or the test runner leaves it) imported by path, the
// JavaScript a Deno user gets from the npm package. The real model on a real
// photo, ImageError, abort, dispose leaving nothing running; and a `deno run` of a script
// that never disposes its remover (with the tiny model of IS-Net's shape,
// test/support/tiny-onnx.ts: the exit does not depend on the model), which must still
// exit by itself.
// (Named *_test.ts: Deno's pattern, not the `.test.ts` of Node's runner.)
import { createRemover, ImageError, InferenceError } from "../../dist/index.js";
import { decodeImage } from "../../src/engine/imaging/index.ts";
import { maskProblems, PHOTO_CASES } from "../support/photo-masks.ts";
import { writeTinyModel } from "../support/tiny-onnx.ts";

const photo = (name: string) => Deno.readFileSync(new URL(`../fixtures/${name}`, import.meta.url));

function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(msg);
}

Deno.test("createRemover under Deno: a real photo's mask, ImageError, abort, dispose by `await using`", async () => {
  let kept: Awaited<ReturnType<typeof createRemover>> | undefined;
  {
    // Disposed when this block ends (Deno's sanitizers do not track node:worker_threads
    // workers, so the check after the block is what shows it).
    await using remover = await createRemover({ backend: "wasm", threads: 2 });
    kept = remover;
    const c = PHOTO_CASES[1]!; // chelsea
    const cut = await remover.remove(photo(c.name), { size: "full" });
    const decoded = await decodeImage(cut.png);
    assert(decoded.ok, "the cut-out decodes");
    const problems = maskProblems(decoded.image, c);
    assert(problems.length === 0, problems.join("; "));

    let junk: unknown;
    await remover.remove(new TextEncoder().encode("not an image")).catch((e) => (junk = e));
    assert(junk instanceof ImageError && junk.code === "invalid_parameter", `junk gave ${junk}`);

    let aborted: unknown;
    await remover.remove(photo(c.name), { signal: AbortSignal.abort() }).catch((e) => (aborted = e));
    assert((aborted as Error)?.name === "AbortError", `abort gave ${aborted}`);
  }
  let after: unknown;
  await kept!.remove(photo(PHOTO_CASES[1]!.name)).catch((e) => (after = e));
  assert(after instanceof InferenceError && after.code === "shutting_down", `a disposed remover gave ${after}`);
});

Deno.test("a Deno script that never disposes its idle remover exits by itself", async () => {
  const script = new URL("./fixtures/no-dispose.ts", import.meta.url);
  const tiny = writeTinyModel();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-check", script.pathname, tiny.path],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(240_000),
  }).output();
  tiny.remove();
  const stderr = new TextDecoder().decode(out.stderr);
  assert(out.signal === null, `killed after 240 s: the idle pool kept Deno alive\n${stderr}`);
  assert(out.code === 0, stderr);
  assert(/cut \d+x\d+, not disposed/.test(new TextDecoder().decode(out.stdout)), "the script cut its image");
});
