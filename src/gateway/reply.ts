// Builds the gateway's success answer: the PNG (or the mirrored API's JSON form when
// the client asks for application/json) with the headers the spec lists for the key
// kind. Errors are rendered by src/http/error-response.ts.
import { imageHeaders } from "../http/headers.ts";
import type { ProductImage } from "./upstream.ts";

export function wantsJson(accept: string | null): boolean {
  if (!accept) return false;
  // JSON only when the client prefers it over images (the mirrored API's clients send exactly "application/json").
  return /application\/json/i.test(accept) && !/image\//i.test(accept);
}

/** The status of every success answer (also what a charged call's row says from its capture, removebg.ts). */
export const SUCCESS_STATUS = 200;

export function successResponse(requestId: string, image: ProductImage, extra: Record<string, string>, json: boolean): Response {
  const headers: Record<string, string> = { ...extra, ...imageHeaders(requestId, image) };
  if (json) {
    const body = {
      data: {
        result_b64: base64(image.png),
        foreground_top: image.foreground.top,
        foreground_left: image.foreground.left,
        foreground_width: image.foreground.width,
        foreground_height: image.foreground.height,
      },
    };
    return new Response(JSON.stringify(body), { status: SUCCESS_STATUS, headers: { ...headers, "content-type": "application/json; charset=utf-8" } });
  }
  return new Response(image.png, { status: SUCCESS_STATUS, headers: { ...headers, "content-type": "image/png" } });
}

function base64(bytes: Uint8Array): string {
  // Chunked so large images do not overflow the argument limit of fromCharCode.
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}
