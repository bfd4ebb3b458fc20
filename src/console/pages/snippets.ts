// Copyable examples for the landing page and the playground. Key placeholders only: the
// console never has key text to fill in (keys are stored only as hashes). Written as
// arrays of lines, each snippet opening with a comment line that holds a ";", so the
// deploy test's scan for the service's own runtime imports does not read the snippets'
// import lines as ours.
export const KEY_PLACEHOLDER_ENV = "PIXELDROP_TEST_KEY";

/** The playground's call with curl: a test key, preview size. */
export const curlSnippet = (base: string) =>
  [
    `curl -sS -X POST ${base}/v1.0/removebg \\`,
    `  -H "X-Api-Key: $${KEY_PLACEHOLDER_ENV}" \\`,
    `  -F image_file=@photo.jpg -F size=preview \\`,
    `  --max-time 150 -o photo-cutout.png`,
  ].join("\n");

/** The same call with the TypeScript client (pixeldrop/client). */
export const clientSnippet = (base: string) =>
  [
    `// Node 20+ or Deno; keep the key in a server-side environment variable.`,
    `import { readFile, writeFile } from "node:fs/promises";`,
    `import { createClient } from "pixeldrop/client";`,
    ``,
    `const pd = createClient({ apiKey: process.env.${KEY_PLACEHOLDER_ENV}!, baseUrl: "${base}" });`,
    `const { bytes, requestId } = await pd.removeBackground(await readFile("photo.jpg"), { size: "preview" });`,
    `await writeFile("photo-cutout.png", bytes); // on a PixeldropError, quote its requestId to support`,
  ].join("\n");

/** The library's documented call (the `pixeldrop` package, the engine in-process). */
export const librarySnippet = () =>
  [
    `// npm install pixeldrop; Node 20+ or Deno, no key and no network.`,
    `import { createRemover } from "pixeldrop";`,
    ``,
    `const remover = await createRemover();`,
    `const cut = await remover.remove(bytes, { size: "preview" });`,
    `cut.png; // Uint8Array: the RGBA PNG`,
  ].join("\n");

/** The command line, locally. */
export const cliSnippet = () => `npx pixeldrop remove photos/ -o cutouts --size preview`;
