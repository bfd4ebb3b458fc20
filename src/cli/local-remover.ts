// Local mode: the library's remover (src/engine/library/), the same engine, pipeline and worker
// pool as the service, with inference in a worker thread so the progress bar keeps moving.
import { ImageError } from "../engine/library/errors.ts";
import { createRemover } from "../engine/library/remover.ts";
import { messageOf } from "../engine/inference/errors.ts";
import type { RemoveArgs } from "./args.ts";
import type { Remover } from "./remover.ts";

export async function createLocalRemover(a: RemoveArgs): Promise<{ ok: true; remover: Remover } | { ok: false; message: string }> {
  let remover;
  try {
    remover = await createRemover({ model: a.model, card: a.card, backend: a.backend, threads: a.threads });
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
