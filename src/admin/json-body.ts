// Reads and validates an operator JSON body with a zod schema; anything wrong is a
// 400 invalid_parameter naming the field, thrown as ApiError for the one error path.
import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "../http/api-error.ts";

export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  let raw: unknown = {};
  const text = await c.req.text();
  if (text.trim() !== "") {
    try {
      raw = JSON.parse(text);
    } catch {
      throw new ApiError("invalid_parameter", "The body is not valid JSON");
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length ? issue.path.join(".") : "body";
    throw new ApiError("invalid_parameter", `${where}: ${issue.message}`);
  }
  return parsed.data;
}
