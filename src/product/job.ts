// One removal job as the product takes it: already parsed, paid for and admitted by
// the gateway. The in-process gateway hands this over directly (one request,
// one parse); the product's HTTP endpoint builds the same job from the form
// and headers of the split deployment. Types only, so the gateway can name them.
import type { Failure } from "../http/api-error.ts";
import type { ImageFacts } from "../http/headers.ts";
import type { Colour } from "../engine/imaging/index.ts";
import type { Size } from "../contract/tiers.ts";
import type { CallClass } from "../limits/test-share.ts";
import type { Channels } from "../contract/params.ts";

export interface ProductJob {
  /** The image file's bytes. They move to a worker thread: nobody may read them afterwards. */
  image: Uint8Array;
  /** The tier's size, the gateway's choice for a test key included; undefined: full. */
  size: Size | undefined;
  semitransparency: boolean;
  channels: Channels;
  background: Colour | undefined;
  requestId: string;
  /** When the caller stops waiting (ms since the epoch). */
  deadline: number;
  /** Whose per-key queue the job joins (the key's ID). */
  queueKey: string;
  /** Live jobs go before test ones. */
  callClass: CallClass;
}

/** The cut-out and its facts (size, foreground box, time, model). */
export interface ProductResult extends ImageFacts {
  png: Uint8Array<ArrayBuffer>;
}

/** A refusal carries its code, title and Retry-After like any Failure. */
export type ProductOutcome = ({ ok: true } & ProductResult) | Failure;

export interface JobRunner {
  /** Why the product takes no job now (shutting down, models not ready), or undefined. */
  unavailable(): Failure | undefined;
  /** Checks the image header, admits the job to its queue, runs it on the engine. */
  run(job: ProductJob): Promise<ProductOutcome>;
}
