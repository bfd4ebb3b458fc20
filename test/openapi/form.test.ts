// The documented removebg form agrees with the app: every value the document lists
// for a part is accepted, a value it does not list gets the answer its
// `x-pd-rejected` names, and so does any value of a part documented as not accepted.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { buildOpenApiDocument } from "../../src/openapi/document.ts";
import { expectError, gatewayHarness, TINY_PNG, type GatewayHarness } from "../gateway/helpers.ts";

let g: GatewayHarness;
let key: string;
before(async () => {
  g = await gatewayHarness({ embedded: true });
  key = (await g.h.customer({ creditKrw: 100_000 })).liveKey;
});
after(() => g.close());

interface Part {
  type?: string;
  enum?: string[];
  /** Free-form parts (bg_color) list accepted values as examples. */
  examples?: string[];
  not?: unknown;
  contentMediaType?: string;
  "x-pd-rejected": { status: number; code: string };
}
const form = (buildOpenApiDocument().components as any).schemas.RemoveBgForm as { properties: Record<string, Part>; additionalProperties: boolean };

async function accepted(fields: Record<string, string | Uint8Array>, what: string) {
  const res = await g.removebg(key, { image_file: TINY_PNG, size: "preview", ...fields });
  assert.equal(res.status, 200, `${what}: ${await res.clone().text()}`);
  await res.arrayBuffer();
}

describe("documented values are accepted", () => {
  for (const [name, part] of Object.entries(form.properties)) {
    for (const value of [...(part.enum ?? []), ...(part.examples ?? [])]) {
      test(`${name}=${value}`, () => accepted({ [name]: value }, `${name}=${value}`));
    }
  }
  test("semitransparency and crop words in any case, as documented", () => accepted({ semitransparency: "FALSE", crop: "Off" }, "upper case"));
});

describe("other values get the documented rejection", () => {
  for (const [name, part] of Object.entries(form.properties)) {
    const { status, code } = part["x-pd-rejected"];
    if (part.enum || part.examples) {
      test(`${name}=bogus → ${status} ${code}`, async () => {
        await expectError(await g.removebg(key, { image_file: TINY_PNG, [name]: "bogus" }), status, code);
      });
    } else if (part.not) {
      test(`${name} sent at all → ${status} ${code}`, async () => {
        await expectError(await g.removebg(key, { image_file: TINY_PNG, [name]: "https://example.com/a.png" }), status, code);
      });
    } else if (part.contentMediaType) {
      test(`${name} sent as text → ${status} ${code}`, async () => {
        await expectError(await g.removebg(key, { [name]: "not a file", size: "preview" }), status, code);
      });
    } else {
      assert.fail(`part ${name}: no way to test its documented values`);
    }
  }

  test("a part the document does not list → 400 unsupported_parameter (additionalProperties: false)", async () => {
    assert.equal(form.additionalProperties, false);
    await expectError(await g.removebg(key, { image_file: TINY_PNG, bg_image_url: "https://example.com/a.png" }), 400, "unsupported_parameter");
  });

  test("crop=true (the spec's example) → 400 unsupported_parameter", async () => {
    await expectError(await g.removebg(key, { image_file: TINY_PNG, crop: "true" }), 400, "unsupported_parameter");
  });

  test("image_file is the one required part", async () => {
    await expectError(await g.removebg(key, { size: "preview" }), 400, "invalid_parameter");
  });
});
