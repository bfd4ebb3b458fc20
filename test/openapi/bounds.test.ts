// Every bound the published document gives a JSON request body (minimum, maximum,
// exclusiveMinimum, minLength, maxLength) is the bound the service enforces: a value
// at the bound is not refused as invalid (whatever else the call answers), and a value
// one step past it is 400 invalid_parameter. The document is read as served
// (GET /openapi.json), so a schema that drifts from the service's own check fails here.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { gatewayHarness, type GatewayHarness } from "../gateway/helpers.ts";

type Schema = {
  type?: string;
  anyOf?: Schema[];
  $ref?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
};
interface Probe {
  operation: string;
  method: string;
  path: string;
  body: Schema;
  property: string;
  bound: string;
  /** Accepted by validation. */
  at: unknown;
  /** One step past: 400 invalid_parameter. */
  past: unknown;
}

let g: GatewayHarness;
let doc: { paths: Record<string, Record<string, { operationId: string; requestBody?: { content: Record<string, { schema: Schema }> } }>>; components: { schemas: Record<string, Schema> } };
before(async () => {
  g = await gatewayHarness();
  doc = await (await g.h.app.request("/openapi.json")).json();
});
after(() => g.close());

const resolve = (s: Schema): Schema => (s.$ref ? resolve(doc.components.schemas[s.$ref.split("/").pop()!]!) : s);
/** The non-null branch of a nullable property. */
const valueSchema = (s: Schema): Schema => resolve(s.anyOf?.find((b) => b.type !== "null") ?? s);

/** A string of `n` characters that is valid apart from its length (an e-mail stays an e-mail). */
function text(property: string, n: number): string {
  if (property !== "email") return "x".repeat(n);
  const tail = "@example.com";
  return n > tail.length ? crypto.randomUUID().replace(/-/g, "").padEnd(n - tail.length, "a").slice(0, n - tail.length) + tail : "a@b".slice(0, n);
}

function probes(): Probe[] {
  const out: Probe[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const json = op.requestBody?.content["application/json"];
      if (!json) continue;
      const body = resolve(json.schema);
      for (const [property, raw] of Object.entries(body.properties ?? {})) {
        const s = valueSchema(raw);
        const add = (bound: string, at: unknown, past: unknown) => out.push({ operation: op.operationId, method, path, body, property, bound, at, past });
        if (s.maximum !== undefined) add(`maximum ${s.maximum}`, s.maximum, s.maximum + 1);
        if (s.minimum !== undefined) add(`minimum ${s.minimum}`, s.minimum, s.minimum - 1);
        if (s.exclusiveMinimum !== undefined) add(`exclusiveMinimum ${s.exclusiveMinimum}`, s.exclusiveMinimum + 1, s.exclusiveMinimum);
        if (s.maxLength !== undefined) add(`maxLength ${s.maxLength}`, text(property, s.maxLength), text(property, s.maxLength + 1));
        if (s.minLength !== undefined) add(`minLength ${s.minLength}`, text(property, s.minLength), text(property, s.minLength - 1));
      }
    }
  }
  return out;
}

/** A valid value for a required property that is not the one probed. */
function sample(property: string, s: Schema): unknown {
  if (s.type === "integer" || s.type === "number") return s.minimum ?? (s.exclusiveMinimum ?? 0) + 1;
  if (s.type === "boolean") return true;
  return text(property, Math.max(s.minLength ?? 1, property === "email" ? 20 : 1));
}

async function send(p: Probe, value: unknown): Promise<{ status: number; code?: string }> {
  const c = await g.h.customer({ creditKrw: 1000 });
  const path = p.path.replace("/admin/v1", "").replace("{orgId}", c.orgId).replace("{appId}", c.appId);
  const body: Record<string, unknown> = {};
  for (const name of p.body.required ?? []) body[name] = sample(name, valueSchema(p.body.properties![name]!));
  body[p.property] = value;
  const r = await g.h.admin(p.method.toUpperCase(), path, body);
  return { status: r.status, code: r.json.errors?.[0]?.code };
}

describe("published bounds of the operator API's bodies", () => {
  test("every bound is enforced exactly where the document puts it", async () => {
    const all = probes();
    // The limits the issue found drifting: the app's daily and monthly limits and the org's.
    for (const [op, prop] of [["patchApp", "dailyLimitKrw"], ["patchApp", "monthlyLimitKrw"], ["patchOrg", "dailyLimitKrw"]]) {
      assert.ok(all.some((p) => p.operation === op && p.property === prop && p.bound.startsWith("maximum")), `${op}.${prop} has a published maximum`);
    }
    for (const p of all) {
      const what = `${p.operation}.${p.property} (${p.bound})`;
      const at = await send(p, p.at);
      assert.notEqual(at.status, 400, `${what}: the document allows ${JSON.stringify(p.at)}, the service refuses it (${at.code})`);
      const past = await send(p, p.past);
      assert.deepEqual([past.status, past.code], [400, "invalid_parameter"], `${what}: ${JSON.stringify(p.past)} is past the bound`);
    }
  });
});
