// Expands the command line's files and folders into the image files to process.
import { readdir, stat } from "node:fs/promises";
import { extname, join } from "node:path";

const IMAGE_EXTENSIONS = new Set([".jpg", ".jpeg", ".png", ".webp"]);

export async function expandInputs(inputs: string[]): Promise<{ files: string[]; missing: string[] }> {
  const files: string[] = [];
  const missing: string[] = [];
  for (const input of inputs) {
    const s = await stat(input).catch(() => undefined);
    if (!s) missing.push(input);
    else if (s.isDirectory()) {
      for (const name of (await readdir(input)).sort()) {
        if (IMAGE_EXTENSIONS.has(extname(name).toLowerCase())) files.push(join(input, name));
      }
    } else files.push(input);
  }
  return { files, missing };
}
