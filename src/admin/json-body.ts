// Reads and validates an operator JSON body with a zod schema. The document says the
// body is application/json, and it is held to that: a body of another media type (or
// none named) is 415 unsupported_media_type, a missing required body or anything wrong
// inside it is 400 invalid_parameter naming the field. Thrown as ApiError for the one
// error path.
import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "../http/api-error.ts";

/** application/json, any case, with or without parameters (charset: JSON is UTF-8 anyway). */
export function isJsonMediaType(contentType: string | undefined | null): boolean {
  return /^\s*application\/json\s*(;|$)/i.test(contentType ?? "");
}

export async function jsonBody<S extends z.ZodType>(c: Context, schema: S, o: { required?: boolean } = {}): Promise<z.infer<S>> {
  const required = o.required ?? true;
  let raw: unknown = {};
  const text = await c.req.text();
  if (text.trim() === "") {
    if (required) throw new ApiError("invalid_parameter", "body: a JSON object is required");
  } else {
    if (!isJsonMediaType(c.req.header("content-type"))) {
      throw new ApiError("unsupported_media_type", "The body must be sent with Content-Type: application/json");
    }
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
