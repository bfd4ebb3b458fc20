// docs/DEPLOY.md's variable reference is the one src/config.ts makes (scripts/config-reference.ts):
// a variable added to the schema, a default or an accepted value changed, or a meaning
// reworded, and this fails until `npm run build:docs` has written the doc again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ConfigSchema } from "../../src/config.ts";
import { REFERENCE_BEGIN, REFERENCE_END, renderConfigReference } from "../../scripts/config-reference.ts";

const doc = readFileSync(new URL("../../docs/DEPLOY.md", import.meta.url), "utf8");

test("DEPLOY.md carries the variable reference src/config.ts makes (npm run build:docs)", () => {
  const a = doc.indexOf(REFERENCE_BEGIN);
  const b = doc.indexOf(REFERENCE_END);
  assert.ok(a >= 0 && b > a, "the reference's markers are in docs/DEPLOY.md");
  assert.equal(doc.slice(a, b + REFERENCE_END.length), renderConfigReference(), "stale: run npm run build:docs");
});

test("every variable of src/config.ts has a row, with its meaning", () => {
  const reference = renderConfigReference();
  for (const name of Object.keys(ConfigSchema.shape)) assert.match(reference, new RegExp(`^\\| \`${name}\` \\|`, "m"), name);
});
