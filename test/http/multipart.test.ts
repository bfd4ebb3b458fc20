// Our multipart/form-data reader (src/http/multipart.ts) against Node's own (undici; Deno's
// differs again, so this file is not in deno.json's unit list): every
// form the platform encodes reads back as the platform's own parser reads it, and where
// the two differ on bytes changed at random from a real form, they differ only as
// multipart.ts's header says.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { boundaryOf, Form, MAX_FORM_PARTS, parseForm as parseOrRefuse } from "../../src/http/multipart.ts";

/** The form, or undefined when the parser refused the bytes (why is checked where it matters). */
const parseForm = (bytes: Uint8Array, boundary: string): Form | undefined => {
  const r = parseOrRefuse(bytes, boundary);
  return r instanceof Form ? r : undefined;
};

/** The bytes and Content-Type the platform sends for `form`. */
async function encode(form: FormData): Promise<{ bytes: Uint8Array; contentType: string }> {
  const req = new Request("http://x/", { method: "POST", body: form });
  return { bytes: new Uint8Array(await req.arrayBuffer()), contentType: req.headers.get("content-type")! };
}

type Plain = [string, string | { filename: string; type: string; bytes: number[] }][];

function plainOurs(form: Form): Plain {
  return form.entries.map(([n, v]) => [n, typeof v === "string" ? v : { filename: v.filename, type: v.type, bytes: [...v.bytes] }]);
}

async function plainPlatforms(bytes: Uint8Array, contentType: string): Promise<Plain | undefined> {
  let fd: FormData;
  try {
    fd = await new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { "content-type": contentType } }).formData();
  } catch {
    return undefined;
  }
  const out: Plain = [];
  for (const [n, v] of fd.entries()) {
    out.push([n, typeof v === "string" ? v : { filename: v.name, type: v.type, bytes: [...new Uint8Array(await v.arrayBuffer())] }]);
  }
  return out;
}

function ours(bytes: Uint8Array, contentType: string): Plain | undefined {
  const b = boundaryOf(contentType);
  const form = b === undefined ? undefined : parseForm(bytes, b);
  return form && plainOurs(form);
}

const text = (s: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(s);

/** An image-like payload holding the byte runs a parser could trip on. */
function awkwardBytes(boundary: string): Uint8Array<ArrayBuffer> {
  return text(`\r\n\r\n--\r\n-${boundary}\r\n--${boundary.slice(0, -1)}\r\r\n\n\u0000\u00ff`);
}

describe("multipart reader", () => {
  test("a platform-encoded form reads as the platform reads it: text, unicode, files with awkward bytes, empty values", async () => {
    const fd = new FormData();
    fd.append("size", "preview");
    fd.append("bg_color", "  #81d4fa ");
    fd.append("note", "한국어 ✓ \"quoted\"");
    fd.append("empty", "");
    fd.append("image_file", new Blob([awkwardBytes("----formdata-undici-0"), new Uint8Array([0x89, 0x50, 0x4e, 0x47])], { type: "image/png" }), "cat \"1\".png");
    fd.append("image_file", new Blob([]), "empty.bin");
    const { bytes, contentType } = await encode(fd);
    const expected = await plainPlatforms(bytes, contentType);
    assert.ok(expected);
    assert.deepEqual(ours(bytes, contentType), expected);
    assert.equal(ours(bytes, contentType)!.length, 6);
  });

  test("file parts are views of the body, not copies", async () => {
    const fd = new FormData();
    fd.append("image_file", new Blob([new Uint8Array([1, 2, 3])]), "a.bin");
    const { bytes, contentType } = await encode(fd);
    const part = parseForm(bytes, boundaryOf(contentType)!)!.getAll("image_file")[0];
    assert.ok(typeof part !== "string");
    assert.equal(part.bytes.buffer, bytes.buffer);
    assert.deepEqual([...part.bytes], [1, 2, 3]);
    assert.equal(part.type, "application/octet-stream"); // what the platform writes for a Blob without a type
  });

  test("hand-written forms: quoted boundary, leading blank lines, epilogue, filename*, header names in any case", () => {
    const body = text(
      "\r\n\r\n" +
        "--x y\r\n" +
        'CONTENT-DISPOSITION: form-data; name="size"\r\n\r\n' +
        "preview\r\n" +
        "--x y\r\n" +
        "content-disposition: form-data; name=\"image_file\"; filename*=\"caf%22.png\"\r\n" +
        "Content-Type: image/png\r\n\r\n" +
        "PNG\r\n" +
        "--x y--\r\nan epilogue",
    );
    const form = parseForm(body, boundaryOf('multipart/form-data; charset=utf-8; boundary="x y"')!);
    assert.ok(form);
    assert.deepEqual(plainOurs(form), [
      ["size", "preview"],
      ["image_file", { filename: 'caf".png', type: "image/png", bytes: [...text("PNG")] }],
    ]);
    assert.deepEqual([...form.names()], ["size", "image_file"]);
  });

  test("boundaries: quoted or bare, absent, too long or ending in a space are refused", () => {
    assert.equal(boundaryOf("multipart/form-data; boundary=abc"), "abc");
    assert.equal(boundaryOf('multipart/form-data; boundary="a;b c"'), "a;b c");
    assert.equal(boundaryOf("multipart/form-data;boundary=abc; charset=x"), "abc");
    assert.equal(boundaryOf("multipart/form-data"), undefined);
    assert.equal(boundaryOf("multipart/form-data; boundary="), undefined);
    assert.equal(boundaryOf(`multipart/form-data; boundary=${"a".repeat(71)}`), undefined);
    assert.equal(boundaryOf('multipart/form-data; boundary="abc "'), undefined);
  });

  const malformed: [string, string][] = [
    ["no delimiter at all", "just bytes"],
    ["no close delimiter", "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n"],
    ["a part cut off in its headers", "--b\r\nContent-Disposition: form-data; name=\"a\""],
    ["no Content-Disposition", "--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--"],
    ["a disposition other than form-data", "--b\r\nContent-Disposition: attachment; name=a\r\n\r\nx\r\n--b--"],
    ["no name", '--b\r\nContent-Disposition: form-data; filename="a"\r\n\r\nx\r\n--b--'],
    ["an unquoted name", "--b\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--b--"],
    ["more after the filename", '--b\r\nContent-Disposition: form-data; name="a"; filename="f"; x=y\r\n\r\nx\r\n--b--'],
    ["a preamble", '--b is not here\r\n--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--b--'],
    ["a lone CR in a header line", '--b\r\nContent-Disposition: form-data; name="a"\rX: y\r\n\r\nx\r\n--b--'],
    ["a header line without a colon", "--b\r\nContent-Disposition: form-data; name=\"a\"\r\nbogus\r\n\r\nx\r\n--b--"],
    ["no CRLF after the delimiter", "--bx\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--b--"],
    ["part headers past 16 KiB", `--b\r\nContent-Disposition: form-data; name=\"a\"\r\nX: ${"y".repeat(17_000)}\r\n\r\nx\r\n--b--`],
  ];
  for (const [what, body] of malformed) {
    test(`malformed: ${what}`, () => assert.equal(parseForm(text(body), "b"), undefined));
  }

  test("the boundary's text inside a part without CRLF before it is content (RFC 2046), where the platform refuses the body", () => {
    const body = '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r--b\n--b--b \r\r--b\r\n--b--';
    assert.deepEqual(plainOurs(parseForm(text(body), "b")!), [["a", "x\r--b\n--b--b \r\r--b"]]);
  });

  test(`the part limit: ${MAX_FORM_PARTS} parts read, one more is refused as its headers begin`, () => {
    const part = (i: number) => `--b\r\nContent-Disposition: form-data; name="${i % 2 ? "size" : "type"}"\r\n\r\nv\r\n`;
    const parts = (n: number) => Array.from({ length: n }, (_, i) => part(i)).join("");
    assert.equal(parseForm(text(`${parts(MAX_FORM_PARTS)}--b--`), "b")?.entries.length, MAX_FORM_PARTS);
    assert.equal(parseOrRefuse(text(`${parts(MAX_FORM_PARTS + 1)}--b--`), "b"), "too-many-parts");
    // 216,363 tiny parts (11.9 MB) whose end is not even a form (no close delimiter): the
    // answer is the count, so the parse stopped after the limit and never reached the end.
    const many = `${parts(216_363)}--b`;
    assert.ok(many.length > 11_500_000 && many.length < 12_000_000, String(many.length));
    assert.equal(parseOrRefuse(text(many), "b"), "too-many-parts");
    assert.equal(parseOrRefuse(text(`${parts(3)}--b`), "b"), "malformed", "a short form with the same end is malformed");
  });

  test("an empty form (the close delimiter alone) has no parts", () => {
    assert.deepEqual(parseForm(text("--b--\r\n"), "b")?.entries, []);
  });

  // A fixed seed: the same cases every run, so a failure can be replayed.
  const random = (seed: number) => (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;

  test("random forms the platform encodes read as the platform reads them", async () => {
    const rand = random(7);
    const alphabet = "ab한\r\n-\"%0D:;= \u0000";
    const pick = (len: number) => Array.from({ length: len }, () => alphabet[rand(alphabet.length)]).join("");
    for (let i = 0; i < 100; i++) {
      const fd = new FormData();
      for (let p = rand(5); p >= 0; p--) {
        if (rand(2)) fd.append(pick(1 + rand(6)), pick(rand(20)));
        else fd.append(pick(1 + rand(6)), new Blob([new Uint8Array(Array.from({ length: rand(300) }, () => [13, 10, 45, rand(256)][rand(4)]!))], { type: ["", "image/png"][rand(2)]! }), pick(rand(8)));
      }
      const { bytes, contentType } = await encode(fd);
      assert.deepEqual(ours(bytes, contentType), await plainPlatforms(bytes, contentType), `form ${i}`);
    }
  });

  test("bytes changed at random: where both read the body they agree; where only one does, for the documented reasons", async () => {
    const fd = new FormData();
    fd.append("size", "auto");
    fd.append("channels", "rgba");
    fd.append("image_file", new Blob([awkwardBytes("x")]), "x.png");
    const { bytes, contentType } = await encode(fd);
    const boundary = boundaryOf(contentType)!;
    const rand = random(14);
    const alphabet = text("\r\n-:;= \"aZ0");
    const seen = { both: 0, onlyOurs: 0, onlyTheirs: 0 };
    for (let i = 0; i < 400; i++) {
      const mutated = new Uint8Array(bytes);
      for (let k = 1 + rand(3); k > 0; k--) mutated[rand(mutated.length)] = alphabet[rand(alphabet.length)]!;
      const theirs = await plainPlatforms(mutated, contentType);
      const mine = ours(mutated, contentType);
      const at = `case ${i}: ${JSON.stringify(new TextDecoder().decode(mutated))}`;
      if (theirs && mine) {
        assert.deepEqual(mine, theirs, at);
        seen.both++;
      } else if (mine) {
        // Ours split the body at every CRLF "--" boundary and nowhere else.
        for (const [, v] of parseForm(mutated, boundary)!.entries) {
          const content = typeof v === "string" ? text(v) : v.bytes;
          assert.ok(!new TextDecoder().decode(content).includes(`\r\n--${boundary}`), at);
        }
        seen.onlyOurs++;
      } else if (theirs) {
        assert.ok(/\r(?!\n)|(?<!\r)\n/.test(headerBlocks(mutated)), `${at}: refused without a lone CR or LF in a part's headers`);
        seen.onlyTheirs++;
      }
    }
    assert.ok(seen.both > 50, `only ${seen.both} mutated forms were read by both: the comparison saw too few`);
  });
});

/** The header sections of every part (from each delimiter's line to the next empty line), joined. */
function headerBlocks(bytes: Uint8Array): string {
  const all = new TextDecoder().decode(bytes);
  return [...all.matchAll(/--[^\r\n]*\r\n([\s\S]*?)\r\n\r\n/g)].map((m) => m[1]).join("\r\n");
}
