// The variable reference in docs/DEPLOY.md, made from src/config.ts's schema: its names,
// defaults and accepted values, and each variable's `.describe()` as its meaning, so the
// doc cannot lack a variable the service reads (npm run build:docs writes it; the deploy
// tests fail while it is stale).
import type { z } from "zod";
import { ConfigSchema } from "../src/config.ts";

export const REFERENCE_BEGIN = "<!-- variables: written by npm run build:docs from src/config.ts -->";
export const REFERENCE_END = "<!-- end of variables -->";

interface Found {
  defaultValue?: unknown;
  accepted: string;
}

/** The default and the accepted values, read through the schema's wrappers. */
function inspect(schema: z.ZodType): Found {
  let s = schema as z.ZodType;
  let defaultValue: unknown;
  for (;;) {
    const def = s._zod.def as unknown as { type: string; in?: z.ZodType; innerType?: z.ZodType; defaultValue?: unknown };
    if (def.type === "pipe") s = def.in!;
    else if (def.type === "default") {
      defaultValue = def.defaultValue;
      s = def.innerType!;
    } else if (def.type === "optional") s = def.innerType!;
    else break;
  }
  const def = s._zod.def as unknown as { type: string; entries?: Record<string, string> };
  if (def.type === "enum") return { defaultValue, accepted: Object.values(def.entries!).map((v) => `\`${v}\``).join(", ") };
  if (def.type === "number") {
    const n = s as unknown as { minValue: number | null; maxValue: number | null };
    const max = n.maxValue !== null && n.maxValue < Number.MAX_SAFE_INTEGER ? n.maxValue : undefined;
    return { defaultValue, accepted: max === undefined ? `integer ≥ ${n.minValue ?? 0}` : `integer ${n.minValue ?? 0}–${max}` };
  }
  const t = s as unknown as { format?: string | null; minLength?: number | null };
  if (t.format === "url") return { defaultValue, accepted: "URL" };
  return { defaultValue, accepted: t.minLength && t.minLength > 1 ? `text, ≥ ${t.minLength} characters` : "text" };
}

const cell = (text: string) => text.replace(/\|/g, "\\|");

export function renderConfigReference(): string {
  const rows = Object.entries(ConfigSchema.shape).map(([name, schema]) => {
    const meta = (schema as z.ZodType).meta() as { description?: string; shownDefault?: string } | undefined;
    if (!meta?.description) throw new Error(`src/config.ts: ${name} has no .describe()`);
    const { defaultValue, accepted } = inspect(schema as z.ZodType);
    const shown = meta.shownDefault ?? (defaultValue === undefined ? "unset" : `\`${String(defaultValue)}\``);
    return `| \`${name}\` | ${cell(shown)} | ${cell(accepted)} | ${cell(meta.description)} |`;
  });
  return [REFERENCE_BEGIN, "", "| variable | default | accepts | meaning |", "|---|---|---|---|", ...rows, "", REFERENCE_END].join("\n");
}

/** `doc` with its reference replaced by the current one; throws if the markers are missing. */
export function withConfigReference(doc: string): string {
  const a = doc.indexOf(REFERENCE_BEGIN);
  const b = doc.indexOf(REFERENCE_END);
  if (a < 0 || b < a) throw new Error(`docs/DEPLOY.md: the markers ${REFERENCE_BEGIN} … ${REFERENCE_END} are missing`);
  return doc.slice(0, a) + renderConfigReference() + doc.slice(b + REFERENCE_END.length);
}
