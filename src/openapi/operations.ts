// The route registry: every operation the HTTP app serves, in the order the document
// lists them. test/openapi/routes.test.ts compares it with the routes the app
// registers, both ways.
import { ADMIN_OPERATIONS, INTERNAL_OPERATIONS } from "./operations-admin.ts";
import type { Operation } from "./model.ts";
import { PUBLIC_OPERATIONS } from "./operations-public.ts";

export const OPERATIONS: readonly Operation[] = [...PUBLIC_OPERATIONS, ...ADMIN_OPERATIONS, ...INTERNAL_OPERATIONS];

export const API_INFO = {
  title: "Pixeldrop API",
  /** The interface version (the /v1.0/ path), not the package version. */
  version: "1.0",
  description:
    "Background removal as a paid API. One call, `POST /v1.0/removebg`, takes an image and answers it as a PNG with the " +
    "background removed. Prepaid credit in KRW; test keys (`pd_test_`, free, preview size) and live keys (`pd_live_`). " +
    "Every error is `{\"errors\":[{\"title\",\"code\"}]}` with an `X-PD-Request-Id` header and is never charged. " +
    "The operator API under `/admin/v1` takes `Authorization: Bearer <OPERATOR_TOKEN>`.",
} as const;
