// Local mode: the library's remover (src/engine/library/), the same engine and pipeline as the
// service. One file runs in this thread (`workers: 0`): the bar is redrawn only as a file
// starts and ends, so a worker bought it nothing, and without the worker's and its band
// helper's threads a one-image call took 0.19 s less wall, 0.4 s less CPU and 35 MiB less
// peak (docs/MODEL.md, "A cold call"). A batch keeps the worker pool, whose band helper
// splits each large image's pixel steps.
import { ImageError } from "../engine/library/errors.ts";
import { createRemover } from "../engine/library/remover.ts";
import { messageOf } from "../engine/inference/errors.ts";
import type { RemoveArgs } from "./args.ts";
import type { Remover } from "./remover.ts";

export async function createLocalRemover(a: RemoveArgs, files: number): Promise<{ ok: true; remover: Remover } | { ok: false; message: string }> {
  let remover;
  try {
    remover = await createRemover({ model: a.model, card: a.card, backend: a.backend, threads: a.threads, ...(files === 1 ? { workers: 0 } : {}) });
  } catch (err) {
    return { ok: false, message: messageOf(err) };
  }
  return {
    ok: true,
    remover: {
      async remove(image) {
        try {
          const cut = await remover.remove(image, { size: a.size, channels: a.channels, bgColor: a.bgColor, inputSide: a.inputSide });
          return { ok: true, png: cut.png };
        } catch (err) {
          // A bad image fails that file only; an engine failure ends the batch.
          if (err instanceof ImageError) return { ok: false, message: err.title };
          return { ok: false, message: messageOf(err), stop: true };
        }
      },
      describe: () => `backend ${remover.backend}, model ${remover.model}`,
      close: () => remover.dispose(),
    },
  };
}
