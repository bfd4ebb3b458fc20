// The planned WebGPU run as a TensorRunner: the graph read once (graph-program.ts), planned
// for the card's own input size as it starts and for any other size at its first run (a
// few shapes kept), run by planned-backend.ts on a device of its own. It starts only for a
// graph every node of which it plans (backend-ort-web.ts asks it first and otherwise starts
// onnxruntime-web's WebGPU provider); a failure to start is the caller's to fall back on.
import type { BoundModel } from "../model-card.ts";
import type { TensorRunner } from "../runner.ts";
import { rgbToTensor } from "../tensor.ts";
import { readGraphProgram, type GraphProgram } from "./graph-program.ts";
import { PlannedBackend, type GpuDevice, type PreparedShape } from "./planned-backend.ts";
import { PlanError } from "./graph-plan.ts";

/** Input shapes kept prepared at once: a service alternates between a few (a preview, a full cut-out, a batch). */
const KEPT_SHAPES = 4;

export type PlannedCheck = { ok: true; program: GraphProgram } | { ok: false; reason: string };

/** Whether the planned run takes this graph for this card, and its program when it does. */
export function plannedProgram(bytes: Uint8Array, model: BoundModel): PlannedCheck {
  if (model.layout === "NHWC") return { ok: false, reason: "the card's layout is NHWC (planned kernels are NCHW)" };
  return readGraphProgram(bytes, model);
}

interface Gpu {
  requestAdapter(): Promise<{ limits: Record<string, number>; requestDevice(d: { requiredLimits: Record<string, number> }): Promise<GpuDevice> } | null>;
}

/** A device with the adapter's largest storage bindings (IS-Net's arena at 1024² is hundreds of MiB). */
export async function requestPlannedDevice(): Promise<GpuDevice> {
  const gpu = (globalThis as { navigator?: { gpu?: Gpu } }).navigator?.gpu;
  const adapter = await gpu?.requestAdapter();
  if (!adapter) throw new Error("no WebGPU adapter");
  const { maxStorageBufferBindingSize, maxBufferSize } = adapter.limits;
  return adapter.requestDevice({ requiredLimits: { maxStorageBufferBindingSize: maxStorageBufferBindingSize!, maxBufferSize: maxBufferSize! } });
}

/**
 * Starts the planned run of `program` for `model`, its own input size prepared (so a device
 * that cannot hold it fails here, not at a run). `device` is destroyed with the runner.
 */
export async function createPlannedRunner(program: GraphProgram, model: BoundModel, device: GpuDevice): Promise<TensorRunner & { webgpuRun: "planned" }> {
  device.pushErrorScope("validation");
  const backend = new PlannedBackend(device, program);
  const shapes: PreparedShape[] = []; // most recently used last
  const shapeFor = (pictures: number, height: number, width: number): PreparedShape => {
    const key = `${pictures}x${height}x${width}`;
    const at = shapes.findIndex((s) => s.key === key);
    if (at >= 0) {
      const found = shapes.splice(at, 1)[0]!;
      shapes.push(found);
      return found;
    }
    if (shapes.length >= KEPT_SHAPES) backend.release(shapes.shift()!);
    const made = backend.prepare(pictures, height, width);
    shapes.push(made);
    return made;
  };
  let failure: string | undefined;
  try {
    shapeFor(1, model.inputSize[0], model.inputSize[1]);
  } catch (err) {
    failure = err instanceof Error ? err.message : String(err);
  }
  const error = await device.popErrorScope();
  if (failure || error) {
    backend.dispose();
    device.destroy();
    throw new Error(`the planned WebGPU run did not start: ${failure ?? error!.message}`);
  }
  return {
    backend: "webgpu",
    webgpuRun: "planned",
    run: (input, height, width) => backend.run(shapeFor(1, height, width), input),
    ...(model.batches
      ? {
          async runRgbBatch(pictures: readonly Uint8Array[], height: number, width: number) {
            const plane = height * width;
            const input = new Float32Array(pictures.length * plane * 3);
            pictures.forEach((rgb, k) => rgbToTensor(rgb, width, height, model, input.subarray(k * plane * 3, (k + 1) * plane * 3)));
            let shape: PreparedShape;
            try {
              shape = shapeFor(pictures.length, height, width);
            } catch (err) {
              // A batch whose arena the device cannot bind runs one picture at a time.
              if (!(err instanceof PlanError) || pictures.length === 1) throw err;
              const one = plane * 3;
              const outs: Float32Array[] = [];
              for (let k = 0; k < pictures.length; k++) outs.push(await backend.run(shapeFor(1, height, width), input.subarray(k * one, (k + 1) * one)));
              return outs;
            }
            const out = await backend.run(shape, input);
            const each = out.length / pictures.length;
            return pictures.map((_, k) => out.subarray(k * each, (k + 1) * each));
          },
        }
      : {}),
    async dispose() {
      for (const s of shapes.splice(0)) backend.release(s);
      backend.dispose();
      device.destroy();
    },
  };
}
