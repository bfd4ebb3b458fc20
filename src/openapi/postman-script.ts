// Building blocks of the collection's test scripts. They use only the part of the `pm`
// API that Postman, newman and Bruno's importer (which rewrites `pm.*` to `bru.*`/`res.*`)
// all understand: pm.test, pm.expect, pm.response.code / json() / text() /
// headers.get(), pm.collectionVariables.get / set. Header names are written in lower
// case: Postman looks them up in any case, Bruno by the lower-case name.

/** A JavaScript string literal. */
export const js = (value: unknown): string => JSON.stringify(value);

/** One named check: `body` is a list of statements that throw (pm.expect) when it fails. */
export function check(name: string, body: string[]): string[] {
  return [`pm.test(${js(name)}, function () {`, ...body.map((l) => `  ${l}`), "});"];
}

/** The answer's header `name`, or null when it is absent. */
export const header = (name: string): string => `pm.response.headers.get(${js(name.toLowerCase())})`;

/** The answer's header `name` as a number (NaN when absent). */
export const headerNumber = (name: string): string => `Number(${header(name)})`;

/** A collection variable, as a string. */
export const variable = (name: string): string => `pm.collectionVariables.get(${js(name)})`;

/** A collection variable as a number. */
export const variableNumber = (name: string): string => `Number(${variable(name)})`;

/**
 * Keeps `expression` in the collection variable `name` for the requests after this one.
 * A failed request (no such field or header) leaves the variable as it was, so the
 * failure is reported once, where it happened, not again by every later check.
 */
export const save = (name: string, expression: string): string =>
  `var kept = ${expression}; if (kept != null) pm.collectionVariables.set(${js(name)}, String(kept));`;

/** The answer's JSON body (only for answers that are JSON). */
export const json = "pm.response.json()";

/** Checks that header `name` is there and is a whole number ≥ 0. */
export const wholeNumberHeader = (name: string): string[] =>
  check(`${name} is a whole number`, [`pm.expect(${header(name)}, ${js(`${name} header`)}).to.match(/^[0-9]+$/);`]);
