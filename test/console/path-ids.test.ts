// Console pages named by an id in the path, asked for with ids that cannot be ours (a
// NUL byte, bytes that are not UTF-8, other shapes), by a signed-in customer: never a
// 500. (The pages answer 404 for an id they do not know; the shared error path answers
// 400 for text the database cannot hold.)
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { makeHarness, type Harness } from "../support/harness.ts";
import { signedUp } from "./client.ts";

let h: Harness;
before(async () => {
  h = await makeHarness({ embedded: true, env: { TRUST_PROXY: "true" } });
});
after(() => h.close());

test("console routes with impossible ids answer 4xx, never 500", async () => {
  const { client } = await signedUp(h);
  const ids = ["%00", "app_%00", "key_a%00b", "%FF", "%C3%28", "x".repeat(300)];
  const routes: [string, string][] = [
    ["GET", "/console/apps/:id"],
    ["POST", "/console/apps/:id/apply"],
    ["POST", "/console/apps/:id/settings"],
    ["GET", "/console/apps/:id/delete"],
    ["POST", "/console/apps/:id/delete"],
    ["GET", "/console/apps/:id/playground"],
    ["POST", "/console/apps/:id/keys/test"],
    ["GET", "/console/keys/:id/reissue"],
    ["POST", "/console/keys/:id/reissue"],
    ["GET", "/console/keys/:id/delete"],
    ["POST", "/console/keys/:id/delete"],
    ["GET", "/console/credit/top-ups/:id"],
    ["POST", "/console/credit/top-ups/:id/confirm"],
  ];
  const wrong: string[] = [];
  for (const [method, route] of routes) {
    for (const id of ids) {
      const path = route.replace(":id", id);
      const p = method === "GET" ? await client.get(path) : await client.post(path, {});
      if (p.status >= 500 || p.status < 400) wrong.push(`${method} ${path}: ${p.status}`);
    }
  }
  assert.deepEqual(wrong, []);
});
