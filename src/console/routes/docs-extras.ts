// The docs page's "beyond the spec" tables, taken from the OpenAPI registry so the
// console and the interface description say the same thing in one place.
import { H } from "../../http/headers.ts";
import { HEADER_DOCS } from "../../openapi/headers.ts";
import { REMOVEBG_FORM } from "../../openapi/removebg-form.ts";

const form = REMOVEBG_FORM.properties as Record<string, { description?: string }>;

export const EXTRA_PARTS = ["channels", "bg_color"].map((name) => ({ name, description: form[name]?.description ?? "" }));

export const EXTRA_HEADERS = [H.model, H.modelInput, H.uncertainty, H.rateLimit, H.rateRemaining, H.rateReset].map((name) => ({
  name,
  description: HEADER_DOCS[name].description,
}));
