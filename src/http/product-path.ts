// The internal product endpoint's path: where the gateway sends a paid job (to the
// in-process product app or to PRODUCT_URL) and where the product app serves it. Here,
// beside the internal headers (headers.ts), so the gateway needs nothing of the product app.
export const PRODUCT_PATH = "/internal/v1/removebg";
