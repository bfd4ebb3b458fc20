// `node --import <this file>`: installs hooks.mjs in this thread and (through the inherited
// --import) in every worker thread, so a process that reaches for a TypeScript loader at
// run time fails, and every module it resolves is listed in $NO_TSX_LOG.
import { register } from "node:module";

register(new URL("./hooks.mjs", import.meta.url), { data: { log: process.env.NO_TSX_LOG } });
