// npm run build:docs: writes docs/openapi.json and docs/pixeldrop.postman_collection.json
// from the route registry (src/openapi/), and docs/DEPLOY.md's variable reference from
// src/config.ts. test/openapi and test/deploy check the committed files are what this
// produces, so run it after changing a route, a schema, an error or a variable.
// `--check` only compares, exiting 1 when a file is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { buildOpenApiDocument, serialiseDocument } from "../src/openapi/document.ts";
import { buildPostmanCollection } from "../src/openapi/postman.ts";
import { withConfigReference } from "./config-reference.ts";

const root = new URL("../", import.meta.url);
const doc = buildOpenApiDocument();
const outputs: [string, string][] = [
  ["docs/openapi.json", serialiseDocument(doc)],
  ["docs/pixeldrop.postman_collection.json", serialiseDocument(buildPostmanCollection(doc))],
  ["docs/DEPLOY.md", withConfigReference(readFileSync(new URL("docs/DEPLOY.md", root), "utf8"))],
];

const check = process.argv.includes("--check");
let stale = 0;
for (const [path, text] of outputs) {
  const url = new URL(path, root);
  let current: string | undefined;
  try {
    current = readFileSync(url, "utf8");
  } catch {
    current = undefined;
  }
  if (current === text) {
    console.log(`${path}: up to date`);
  } else if (check) {
    console.log(`${path}: stale (run npm run build:docs)`);
    stale++;
  } else {
    writeFileSync(url, text);
    console.log(`${path}: written (${text.length} bytes)`);
  }
}
process.exit(stale ? 1 : 0);
