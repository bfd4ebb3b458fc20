// Whether dist/ was built from the sources beside it. `npm run build` writes a stamp of
// src/ (every file's path, size and modification time, hashed) into dist/; the service's
// entry and the CLI compare it with src/ before they load anything else, so a checkout
// whose sources changed since the last build refuses to start instead of running old
// code. Installed packages and images have no src/ beside dist/: nothing to compare.
// Plain JavaScript so that scripts/build.mjs runs it before anything is compiled.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const STAMP_FILE = "build-stamp.json";

/** A hash of every file under srcDir by path, size and mtime (whole ms): cheap (stat only, no reads). */
export function sourceStamp(srcDir) {
  const lines = [];
  const walk = (dir, rel) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const name = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path, name);
      else {
        const s = statSync(path);
        // Whole milliseconds: Deno's statSync truncates mtimeMs where Node keeps the
        // fraction, and `deno run bin/pixeldrop.mjs` must agree with the stamp Node wrote.
        lines.push(`${name}\t${s.size}\t${Math.trunc(s.mtimeMs)}`);
      }
    }
  };
  walk(srcDir, "");
  return createHash("sha256").update(lines.sort().join("\n")).digest("hex");
}

/**
 * Why the dist/ folder `distUrl` must not run, or undefined when it may: it was built from
 * the src/ beside it as that folder is now, or there is no src/ beside it. A module that is
 * not inside a folder named dist (the sources run through tsx or Deno) is never checked.
 * PIXELDROP_ALLOW_STALE_DIST=1 skips the check on purpose: test runs that have just built
 * dist/ while other work in the same checkout goes on editing src/.
 */
export function staleDistReason(distUrl, env = process.env) {
  const dist = fileURLToPath(distUrl);
  if (!/[\\/]dist[\\/]?$/.test(dist) || env.PIXELDROP_ALLOW_STALE_DIST === "1") return undefined;
  const src = join(dist, "..", "src");
  if (!existsSync(src)) return undefined;
  let built;
  try {
    built = JSON.parse(readFileSync(join(dist, STAMP_FILE), "utf8")).src;
  } catch {
    return `${dist} has no build stamp: it was not built by \`npm run build\`. Run \`npm run build\` (or \`npm run dev\` to run the sources directly).`;
  }
  if (built !== sourceStamp(src)) {
    return `${dist} is older than ${src} (the sources changed since the last build). Run \`npm run build\` (or \`npm run dev\` to run the sources directly).`;
  }
  return undefined;
}
