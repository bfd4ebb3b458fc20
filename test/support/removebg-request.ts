// A POST /v1.0/removebg as a real client sends it: the multipart body serialised up
// front with its Content-Length announced (curl and the usual HTTP libraries do this).
// harness.removebg streams a FormData without a length, which makes the gateway count
// every request as a possible 12 MB against its receive budget; with hundreds of
// concurrent requests that budget, not the behaviour under test, would decide.

export type FormFields = Record<string, string | Uint8Array>;

export async function removebgInit(key: string | undefined, fields: FormFields): Promise<RequestInit & { headers: Record<string, string> }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (typeof v === "string") form.append(k, v);
    else form.append(k, new Blob([v as Uint8Array<ArrayBuffer>], { type: "application/octet-stream" }), `${k}.bin`);
  }
  // Letting the platform encode the form gives the boundary and the exact bytes.
  const encoded = new Request("http://form.invalid/", { method: "POST", body: form });
  const body = new Uint8Array(await encoded.arrayBuffer());
  const headers: Record<string, string> = {
    "content-type": encoded.headers.get("content-type")!,
    "content-length": String(body.byteLength),
  };
  if (key !== undefined) headers["x-api-key"] = key;
  return { method: "POST", body, headers };
}

/** Sends one call through `send` (app.request or fetch against a base URL). */
export async function sendRemovebg(
  send: (path: string, init: RequestInit) => Response | Promise<Response>,
  key: string | undefined,
  fields: FormFields,
): Promise<Response> {
  return send("/v1.0/removebg", await removebgInit(key, fields));
}

/** Status, error code and the money headers of an answer, with the body consumed. */
export interface Outcome {
  status: number;
  code?: string;
  requestId: string;
  chargedKrw?: number;
  balanceKrw?: number;
  retryAfter?: string;
  testRemaining?: string;
}

export async function outcomeOf(res: Response): Promise<Outcome> {
  const num = (h: string) => (res.headers.get(h) === null ? undefined : Number(res.headers.get(h)));
  const out: Outcome = { status: res.status, requestId: res.headers.get("x-pd-request-id") ?? "" };
  if (res.status === 200) {
    await res.arrayBuffer();
  } else {
    const body = (await res.json().catch(() => undefined)) as { errors?: { code?: string }[] } | undefined;
    out.code = body?.errors?.[0]?.code;
  }
  const charged = num("x-pd-charged-krw");
  const balance = num("x-pd-balance-krw");
  if (charged !== undefined) out.chargedKrw = charged;
  if (balance !== undefined) out.balanceKrw = balance;
  const retry = res.headers.get("retry-after");
  if (retry !== null) out.retryAfter = retry;
  const remaining = res.headers.get("x-pd-test-remaining");
  if (remaining !== null) out.testRemaining = remaining;
  return out;
}

/** How many outcomes have each "status code" label, e.g. { "200": 50, "402 insufficient_credits": 150 }. */
export function tally(outcomes: readonly Outcome[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const o of outcomes) {
    const label = o.code ? `${o.status} ${o.code}` : String(o.status);
    t[label] = (t[label] ?? 0) + 1;
  }
  return t;
}
