// The GPU diagnosis on this machine under Deno, where Mesa's software adapter (lavapipe) is
// what Deno offers without a GPU: a software adapter, no problem, exit 0 from
// `pixeldrop doctor`. On a GPU machine the adapter is a hardware one and nothing is missing.
// Skipped without an adapter, unless CI requires one (webgpu-gate.ts).
import { diagnoseGpu, requestAdapterFacts } from "../../src/engine/inference/gpu-doctor.ts";
import { doctorCommand } from "../../src/cli/doctor-command.ts";
import { gpuTestIn } from "./webgpu-gate.ts";

function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(msg);
}

const gpuTest = gpuTestIn("test/deno/gpu_doctor_test.ts");

gpuTest("the diagnosis names Deno's adapter; a software one without a GPU is no problem", async () => {
  const d = await diagnoseGpu();
  const text = JSON.stringify(d, null, 1);
  assert(d.runtime === "deno", text);
  assert(d.adapter, `an adapter is offered here: ${text}`);
  if (d.gpuPresent) {
    assert(d.verdict === "gpu" && !d.adapter.software, `a GPU here, and a hardware adapter for it: ${text}`);
  } else {
    assert(d.verdict === "software-only", text);
    assert(d.adapter.software, `no GPU device, so the adapter is a software one: ${text}`);
    assert(/llvmpipe|lavapipe|swiftshader/i.test(d.adapter.description), `Mesa's (or another) rasteriser: ${d.adapter.description}`);
    assert(d.summary.includes("only a software WebGPU adapter"), d.summary);
  }
  assert(d.problems.length === 0, `no problem: ${text}`);
});

gpuTest("the adapter the engine already holds is taken as is, and gives the same diagnosis", async () => {
  const asked = await requestAdapterFacts();
  assert(asked.adapter, `an adapter: ${asked.error}`);
  let requests = 0;
  const d = await diagnoseGpu({ adapter: asked.adapter, requestAdapter: async () => (requests++, asked) });
  assert(requests === 0, "asked again");
  assert(d.adapter?.description === asked.adapter.description, JSON.stringify(d));
  assert(d.verdict === (await diagnoseGpu()).verdict, "the same verdict either way");
});

gpuTest("pixeldrop doctor under Deno: the adapter and whether it is a software one, exit 0", async () => {
  const out: string[] = [];
  const code = await doctorCommand([], (s) => out.push(s), (s) => out.push(s));
  const text = out.join("\n");
  assert(code === 0, text);
  assert(/^ {2}runtime {2}deno /m.test(text), text);
  // Without a GPU device the adapter Deno offers is a software one, and said to be.
  const kind = (await diagnoseGpu()).gpuPresent ? "hardware" : "software (a CPU rasteriser, not a GPU)";
  assert(new RegExp(`^ {2}adapter {2}.*${kind.replace(/[()]/g, "\\$&")}`, "m").test(text), text);
  assert(!/^ {2}missing/m.test(text), text);
});
