// Worker entries are named by URL, which the build's import rewriting does not touch:
// from the sources the entry is a .ts file, after `npm run build` (dist/) a .js file.
// Naming it relative to the caller's own URL keeps both working.

/** The URL of module `path` (relative, without extension) beside `from`, in `from`'s form. */
export function moduleBeside(from: string, path: string): URL {
  const ext = /\.[cm]?tsx?$/.test(new URL(from).pathname) ? ".ts" : ".js";
  return new URL(`${path}${ext}`, from);
}
