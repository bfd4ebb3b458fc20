// The console's docs page lists the options and headers beyond the spec,
// with the same words as the OpenAPI document.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { HEADER_DOCS } from "../../src/openapi/headers.ts";
import { makeHarness, type Harness } from "../support/harness.ts";

let h: Harness;
before(async () => {
  h = await makeHarness({ embedded: true, engine: null });
});
after(() => h.close());

test("channels, bg_color and the new headers are on /console/docs", async () => {
  const res = await h.app.request("/console/docs");
  assert.equal(res.status, 200);
  const html = await res.text();
  for (const name of ["channels", "bg_color", "X-PD-Model", "X-PD-Uncertainty", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]) {
    assert.ok(html.includes(`<code>${name}</code>`), name);
  }
  const phrase = "neither clearly background nor clearly subject";
  assert.ok(HEADER_DOCS["X-PD-Uncertainty"].description.includes(phrase));
  assert.ok(html.includes(phrase), "the OpenAPI description itself");
});
