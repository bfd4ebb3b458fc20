// Imported first by the service's entry (main.ts) and the CLI (bin/pixeldrop.mjs): a
// dist/ built from older sources than the checkout's src/ ends the process with a clear
// message before any of its modules run (build-stamp.mjs).
import { staleDistReason } from "./build-stamp.mjs";

const reason = staleDistReason(new URL(".", import.meta.url));
if (reason) {
  console.error(`pixeldrop: ${reason}`);
  process.exit(1);
}
