// Header names shared by the gateway and the product service.
export const H = {
  requestId: "X-PD-Request-Id",
  chargedKrw: "X-PD-Charged-KRW",
  balanceKrw: "X-PD-Balance-KRW",
  testSize: "X-PD-Test-Size",
  testRemaining: "X-PD-Test-Remaining",
  width: "X-Width",
  height: "X-Height",
  processingMs: "X-Processing-Ms",
  fgTop: "X-Foreground-Top",
  fgLeft: "X-Foreground-Left",
  fgWidth: "X-Foreground-Width",
  fgHeight: "X-Foreground-Height",
  // Internal, gateway → product only
  deadline: "X-PD-Deadline",
  queueKey: "X-PD-Queue-Key",
  forceSize: "X-PD-Force-Size",
} as const;
