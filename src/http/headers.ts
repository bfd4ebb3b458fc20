// Header names shared by the gateway and the product service.
export const H = {
  requestId: "X-PD-Request-Id",
  chargedKrw: "X-PD-Charged-KRW",
  balanceKrw: "X-PD-Balance-KRW",
  testSize: "X-PD-Test-Size",
  testRemaining: "X-PD-Test-Remaining",
  // Idempotency-Key on removebg (draft-ietf-httpapi-idempotency-key-header) and the replay mark
  idempotencyKey: "Idempotency-Key",
  replayed: "Idempotent-Replayed",
  width: "X-Width",
  height: "X-Height",
  processingMs: "X-Processing-Ms",
  fgTop: "X-Foreground-Top",
  fgLeft: "X-Foreground-Left",
  fgWidth: "X-Foreground-Width",
  fgHeight: "X-Foreground-Height",
  // Beyond the spec (docs/DECISIONS.md "What remove.bg's clients also expect")
  model: "X-PD-Model",
  modelInput: "X-PD-Model-Input",
  uncertainty: "X-PD-Uncertainty",
  rateLimit: "X-RateLimit-Limit",
  rateRemaining: "X-RateLimit-Remaining",
  rateReset: "X-RateLimit-Reset",
  // Internal, gateway → product only
  deadline: "X-PD-Deadline",
  queueKey: "X-PD-Queue-Key",
  forceSize: "X-PD-Force-Size",
  /** `live` or `test`: which class of the product's queue the job joins (paid first). */
  callClass: "X-PD-Call-Class",
} as const;

export interface ImageFacts {
  width: number;
  height: number;
  processingMs: number;
  foreground: { top: number; left: number; width: number; height: number };
  /** Which model made the cut-out, "name/version" (absent when unknown). */
  model?: string;
  /** The model's input size for this image, "WxH" (absent when unknown). */
  modelInput?: string;
  /** In [0, 1] (absent when unknown). */
  uncertainty?: number;
}

/** The success headers both the product and the gateway send for a cut-out. */
export function imageHeaders(requestId: string, r: ImageFacts): Record<string, string> {
  return {
    [H.requestId]: requestId,
    [H.width]: String(r.width),
    [H.height]: String(r.height),
    [H.processingMs]: String(r.processingMs),
    [H.fgTop]: String(r.foreground.top),
    [H.fgLeft]: String(r.foreground.left),
    [H.fgWidth]: String(r.foreground.width),
    [H.fgHeight]: String(r.foreground.height),
    ...(r.model ? { [H.model]: r.model } : {}),
    ...(r.modelInput ? { [H.modelInput]: r.modelInput } : {}),
    ...(r.uncertainty !== undefined ? { [H.uncertainty]: String(r.uncertainty) } : {}),
  };
}
