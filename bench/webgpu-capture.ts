// Graph capture on onnxruntime-web's WebGPU provider (session option enableGraphCapture):
// the first run records every kernel's pipeline, bind group and workgroup count, later runs
// replay that list without the per-kernel work on the CPU (shape checks, uniforms, program
// lookup). It needs the input and output bound to fixed GPU buffers, which webgpu-io.ts
// gives every run, and one shape per session.
//
// onnxruntime-web 1.30 replays a bind group whose buffer entry is itself a binding
// ({ buffer: { buffer, offset, size } }); Deno's WebIDL check refuses it ("'buffer' of
// 'GPUBufferBinding' ... can not be converted to a GPUBuffer") at the first replay. The
// shim below unwraps such an entry to the binding it holds, once per realm; entries of the
// right shape pass untouched. With it the replays gave the uncaptured runs' masks exactly
// (on Mesa's lavapipe and an H100), but no time back: bench/webgpu-forms.ts measures it,
// docs/MODEL.md ("The GPU form's graph") has the numbers, and the engine leaves capture off.

interface BindEntry {
  binding: number;
  resource: unknown;
}

let installed = false;

/** Wraps GPUDevice.createBindGroup in this realm to unwrap a binding nested in a binding. */
export function flattenNestedBindings(): void {
  if (installed) return;
  const g = globalThis as unknown as { GPUDevice?: { prototype: Record<string, unknown> }; GPUBuffer?: new () => unknown };
  const proto = g.GPUDevice?.prototype;
  const original = proto?.createBindGroup as ((d: { entries: BindEntry[] }) => unknown) | undefined;
  if (!proto || typeof original !== "function" || !g.GPUBuffer) return;
  const Buffer = g.GPUBuffer;
  installed = true;
  proto.createBindGroup = function (this: unknown, d: { entries: BindEntry[] }) {
    if (!d.entries.some((e) => nested(e.resource, Buffer))) return original.call(this, d);
    const entries = d.entries.map((e) => (nested(e.resource, Buffer) ? { ...e, resource: (e.resource as { buffer: unknown }).buffer } : e));
    return original.call(this, { ...d, entries });
  };
}

function nested(resource: unknown, Buffer: new () => unknown): boolean {
  const inner = (resource as { buffer?: unknown } | null)?.buffer;
  return typeof inner === "object" && inner !== null && !(inner instanceof Buffer) && (inner as { buffer?: unknown }).buffer instanceof Buffer;
}
