// Module resolution hooks for the built-output tests (register.mjs installs them): any
// import of tsx or esbuild, or of a .ts/.tsx file, throws (ERR_TSX_AT_RUN_TIME) and is
// logged as FORBIDDEN; every other resolved URL is logged as it is.
import { appendFileSync } from "node:fs";

let log;
export function initialize(data) {
  log = data?.log;
}

const write = (line) => {
  if (log) appendFileSync(log, `${line}\n`);
};

const FORBIDDEN_SPECIFIER = /^(tsx|esbuild)(\/|$)/;
const FORBIDDEN_URL = /\/node_modules\/(tsx|esbuild|@esbuild)\/|\.[cm]?tsx?$/;

export async function resolve(specifier, context, next) {
  if (FORBIDDEN_SPECIFIER.test(specifier)) {
    write(`FORBIDDEN ${specifier} (from ${context.parentURL})`);
    throw Object.assign(new Error(`run-time import of ${specifier} from ${context.parentURL}`), { code: "ERR_TSX_AT_RUN_TIME" });
  }
  const resolved = await next(specifier, context);
  if (FORBIDDEN_URL.test(resolved.url)) {
    write(`FORBIDDEN ${resolved.url} (from ${context.parentURL})`);
    throw Object.assign(new Error(`run-time import of ${resolved.url} from ${context.parentURL}`), { code: "ERR_TSX_AT_RUN_TIME" });
  }
  write(resolved.url);
  return resolved;
}
