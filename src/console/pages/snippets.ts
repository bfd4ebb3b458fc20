// Copyable examples of the playground's call, made with a key placeholder: the console
// never has key text to fill in (keys are stored only as hashes).
export const KEY_PLACEHOLDER_ENV = "PIXELDROP_TEST_KEY";

/** The playground's call with curl: a test key, preview size. */
export const curlSnippet = (base: string) => `curl -sS -X POST ${base}/v1.0/removebg \\
  -H "X-Api-Key: $${KEY_PLACEHOLDER_ENV}" \\
  -F image_file=@photo.jpg -F size=preview \\
  --max-time 150 -o photo-cutout.png`;

/** The same call with the TypeScript client (pixeldrop/client). */
export const clientSnippet = (base: string) => `// Node 20+ or Deno; keep the key in a server-side environment variable.
import { readFile, writeFile } from "node:fs/promises";
import { createClient } from "pixeldrop/client";

const pd = createClient({ apiKey: process.env.${KEY_PLACEHOLDER_ENV}!, baseUrl: "${base}" });
const { bytes, requestId } = await pd.removeBackground(await readFile("photo.jpg"), { size: "preview" });
await writeFile("photo-cutout.png", bytes); // on a PixeldropError, quote its requestId to support`;
