// Where each input's cut-out is written. The naming rule (DECISIONS.md "CLI output
// names"): `photos/cat.jpg` → `<out>/cat.png`. When several inputs of one run would
// get the same name (`cat.jpg` and `cat.webp`, or `a/cat.jpg` and `b/cat.jpg`), none
// of them gets the plain name: each keeps its extension, `cat.jpg.png`, `cat.webp.png`,
// and any still equal get `-2`, `-3`… in input order (`cat.jpg-2.png`). Names are
// compared without regard to case, since macOS and Windows folders ignore it. The
// plan depends only on the list of inputs, so a resumed run (--skip-existing) maps
// every file to the same name again.
import { basename, extname, join, resolve } from "node:path";

export interface PlannedOutput {
  file: string;
  out: string;
}

/** One entry per distinct input file (the same path given twice is processed once), in input order. */
export function planOutputs(files: string[], outDir: string): PlannedOutput[] {
  const seen = new Set<string>();
  const unique = files.filter((f) => {
    const key = resolve(f);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const stem = (f: string) => basename(f, extname(f));
  const stemCount = new Map<string, number>();
  for (const f of unique) stemCount.set(stem(f).toLowerCase(), (stemCount.get(stem(f).toLowerCase()) ?? 0) + 1);

  const taken = new Set<string>();
  return unique.map((file) => {
    const shared = stemCount.get(stem(file).toLowerCase())! > 1;
    const base = shared ? `${stem(file)}${extname(file)}` : stem(file);
    let name = `${base}.png`;
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${base}-${n}.png`;
    taken.add(name.toLowerCase());
    return { file, out: join(outDir, name) };
  });
}
