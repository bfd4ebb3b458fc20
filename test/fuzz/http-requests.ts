// Arbitrary requests to POST /v1.0/removebg, as fast-check arbitraries: multipart bodies
// framed by hand (so the framing itself can be wrong: odd boundaries, bare LF, missing
// CRLFs and closing boundary, duplicate parts, huge part headers), bodies that are not
// multipart at all, Content-Type and Content-Length that lie, X-Api-Key garbage,
// parameter values and query strings. Valid-looking requests stay common, so the paid
// path (hold, product, capture) runs often enough to be checked for "charged once".
import fc from "fast-check";
import { concat, type Mutated } from "./image-mutations.ts";

export type KeyChoice = "live" | "test" | "none" | "garbage" | "near-miss" | "wrong-kind" | "empty";

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  /** Extra header lines for this part, e.g. a 64 KB one. */
  extraHeaders: string[];
  value: string | Uint8Array;
}

export interface FuzzRequest {
  kind: string;
  method: string;
  query: string;
  key: KeyChoice;
  garbageKey: string;
  contentType: string | undefined;
  contentLength: string | undefined;
  accept: string | undefined;
  body: Uint8Array | undefined;
}

const enc = new TextEncoder();
const bytes = (s: string) => enc.encode(s);

/** Header-safe text: what a client could put in a header value (no CR, LF or NUL). */
const headerText = (max: number) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: max });

const paramValue = fc.oneof(
  fc.constantFrom("preview", "small", "regular", "auto", "full", "hd", "PREVIEW", " preview ", "", "true", "false", "png", "jpg", "product", "car", "0", "1"),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
);

const partName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("image_file", "size", "type", "format", "semitransparency", "crop", "channels", "bg_color") },
  { weight: 1, arbitrary: fc.constantFrom("image_url", "image_file_b64", "crop_margin", "bg_image_url", "IMAGE_FILE", "image_file ", "") },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

export interface Framing {
  boundary: string;
  newline: "\r\n" | "\n" | "";
  closing: boolean;
  preamble: boolean;
  blankAfterHeaders: boolean;
}

const boundaryText = fc.oneof(
  fc.constantFrom("----pixeldropfuzz", "x", "a".repeat(70), "b".repeat(300), "--", "with space", "quo\"te", "ünï"),
  fc.stringMatching(/^[0-9A-Za-z'()+_,./:=?-]{1,70}$/),
);

const framing: fc.Arbitrary<Framing> = fc.record({
  boundary: boundaryText,
  newline: fc.constantFrom("\r\n", "\r\n", "\r\n", "\n", "") as fc.Arbitrary<Framing["newline"]>,
  closing: fc.boolean(),
  preamble: fc.boolean(),
  blankAfterHeaders: fc.oneof(fc.constant(true), fc.constant(true), fc.constant(false)),
});

export function frameMultipart(parts: Part[], f: Framing): Uint8Array {
  const nl = f.newline;
  const out: Uint8Array[] = [];
  if (f.preamble) out.push(bytes(`this is a preamble${nl}`));
  for (const p of parts) {
    let disposition = `Content-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) disposition += `; filename="${p.filename}"`;
    const lines = [`--${f.boundary}`, disposition];
    if (p.contentType !== undefined) lines.push(`Content-Type: ${p.contentType}`);
    lines.push(...p.extraHeaders);
    out.push(bytes(lines.join(nl) + nl + (f.blankAfterHeaders ? nl : "")));
    out.push(typeof p.value === "string" ? bytes(p.value) : p.value);
    out.push(bytes(nl));
  }
  if (f.closing) out.push(bytes(`--${f.boundary}--${nl}`));
  return concat(...out);
}

function partsArb(images: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Part[]> {
  const imagePart = fc.record({
    name: fc.constant("image_file"),
    filename: fc.option(fc.constantFrom("a.png", "photo.jpg", "", "../../etc/passwd", "x\u00e9.webp"), { nil: undefined }),
    contentType: fc.option(fc.constantFrom("image/png", "image/jpeg", "application/octet-stream", "text/plain; charset=utf-16", "garbage/"), { nil: undefined }),
    extraHeaders: fc.constant([] as string[]),
    value: images,
  });
  const hugeHeader = fc.constantFrom(8_000, 70_000).map((n) => [`X-Padding: ${"p".repeat(n)}`]);
  const otherPart = fc.record({
    name: partName,
    // fc.option's freq is the odds of nil (1 in freq): rare here means a oneof with weights.
    filename: fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("f.txt", "") }),
    contentType: fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom("text/plain; charset=iso-8859-1", "text/plain; charset=utf-7", "application/json", 'x/y; charset=""') },
    ),
    extraHeaders: fc.oneof({ weight: 8, arbitrary: fc.constant([] as string[]) }, { weight: 1, arbitrary: hugeHeader }),
    value: fc.oneof(paramValue, images),
  });
  return fc
    .tuple(fc.option(imagePart, { freq: 8, nil: undefined }), fc.array(otherPart, { maxLength: 4 }), fc.boolean())
    .map(([img, others, imageFirst]) => {
      const list = img ? (imageFirst ? [img, ...others] : [...others, img]) : others;
      return list;
    });
}

/** A valid upload's parts: one image and allowed parameters only. */
function validParts(images: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Part[]> {
  return fc.record({ img: images, size: fc.option(fc.constantFrom("preview", "small", "regular", "auto", "full"), { nil: undefined }) }).map(({ img, size }) => {
    const parts: Part[] = [{ name: "image_file", filename: "in.png", contentType: "image/png", extraHeaders: [], value: img }];
    if (size) parts.push({ name: "size", extraHeaders: [], value: size });
    return parts;
  });
}

/** Mostly absent (app.request sends the real length); one request in eleven lies. */
const contentLengthLie = fc.oneof(
  { weight: 10, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.oneof(fc.constantFrom("0", "1", "12000001", "99999999999999999999", "-5", "abc", "1e3", " 7 ", "12000000"), fc.nat().map(String)) },
);

/** The fields every request kind takes unchanged from the shared `base` record. */
function sent(r: Pick<FuzzRequest, "method" | "query" | "key" | "garbageKey" | "accept">) {
  return { method: r.method, query: r.query, key: r.key, garbageKey: r.garbageKey, accept: r.accept };
}

/**
 * One request. `images` supplies image bytes (real fixtures and damaged ones).
 * The request kind (for the summary table) says which layer was fuzzed.
 */
export function fuzzRequest(images: fc.Arbitrary<Mutated | Uint8Array>): fc.Arbitrary<FuzzRequest> {
  const imageBytes = images.map((m) => (m instanceof Uint8Array ? m : m.bytes));
  const key = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<KeyChoice>("live", "test") },
    { weight: 2, arbitrary: fc.constantFrom<KeyChoice>("none", "garbage", "near-miss", "wrong-kind", "empty") },
  );
  const garbageKey = fc.oneof(headerText(200), fc.stringMatching(/^pd_(live|test)_[0-9A-Za-z]{0,60}$/));
  const base = {
    method: fc.oneof({ weight: 12, arbitrary: fc.constant("POST") }, { weight: 1, arbitrary: fc.constantFrom("GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD") }),
    query: fc.oneof({ weight: 10, arbitrary: fc.constant("") }, { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((s) => `?${encodeURIComponent(s)}`) }, { weight: 1, arbitrary: fc.constant("?") }),
    key,
    garbageKey,
    accept: fc.option(fc.constantFrom("application/json", "image/*", "*/*", "application/json, image/png", "text/html"), { freq: 3, nil: undefined }),
    contentLength: contentLengthLie,
  };
  const multipart = (parts: fc.Arbitrary<Part[]>, kind: string) =>
    fc.record({ ...base, parts, framing, ctStyle: fc.constantFrom("plain", "plain", "plain", "charset", "quoted", "upper", "no-boundary", "other-boundary", "bad-type") }).map((r) => {
      const ct = {
        plain: `multipart/form-data; boundary=${r.framing.boundary}`,
        charset: `multipart/form-data; charset=utf-8; boundary=${r.framing.boundary}`,
        quoted: `multipart/form-data; boundary="${r.framing.boundary}"`,
        upper: `MULTIPART/FORM-DATA; BOUNDARY=${r.framing.boundary}`,
        "no-boundary": "multipart/form-data",
        "other-boundary": "multipart/form-data; boundary=somethingelse",
        "bad-type": "multipart/mixed; boundary=" + r.framing.boundary,
      }[r.ctStyle];
      const framingKind = r.framing.newline !== "\r\n" || !r.framing.closing || !r.framing.blankAfterHeaders ? " (bad framing)" : "";
      return {
        kind: `${kind}${framingKind}${r.ctStyle === "plain" ? "" : ` [${r.ctStyle}]`}`,
        ...sent(r),
        contentLength: r.contentLength,
        contentType: ct,
        body: frameMultipart(r.parts, r.framing),
      };
    });
  const wellFramed: Framing = { boundary: "----pd", newline: "\r\n", closing: true, preamble: false, blankAfterHeaders: true };
  const clean = fc.record({ ...base, contentLength: fc.constant(undefined), method: fc.constant("POST"), query: fc.constant(""), parts: validParts(imageBytes) }).map((r) => ({
    kind: "valid form",
    ...sent(r),
    contentLength: undefined,
    contentType: `multipart/form-data; boundary=${wellFramed.boundary}`,
    body: frameMultipart(r.parts, wellFramed),
  }));
  const notMultipart = fc
    .record({
      ...base,
      ct: fc.option(fc.constantFrom("application/json", "application/x-www-form-urlencoded", "text/plain", "image/png", "application/octet-stream", ";;;", "multipart/form-data; boundary="), { nil: undefined }),
      body: fc.oneof(
        fc.constantFrom('{"image_url":"http://x"}', "image_file_b64=AAAA", '{"size":"full"}', "[]", "null", "{", "size=preview&image_file=abc").map(bytes),
        fc.uint8Array({ maxLength: 1024 }),
        imageBytes,
      ),
    })
    .map((r) => ({
      kind: `not multipart (${r.ct ?? "no type"})`,
      ...sent(r),
      contentLength: r.contentLength,
      contentType: r.ct,
      body: r.body,
    }));
  return fc.oneof(
    { weight: 4, arbitrary: clean },
    { weight: 4, arbitrary: multipart(partsArb(imageBytes), "fuzzed parts") },
    { weight: 2, arbitrary: notMultipart },
  );
}
