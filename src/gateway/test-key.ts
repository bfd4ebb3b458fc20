// "A test key means preview" (interface spec, test keys): decided here only. The
// gateway makes a test key's call at this size whatever was asked (and tells the
// product so with X-PD-Force-Size), reserves and logs by its tier, and says so with
// X-PD-Test-Size on every answer to a test key.
import type { KeyKind } from "../keys/format.ts";
import type { Size } from "../imaging/tiers.ts";

export const TEST_KEY_SIZE = "preview" satisfies Size;

/** The size a key's calls are made at whatever they ask for; undefined: as asked. */
export function forcedSize(kind: KeyKind): Size | undefined {
  return kind === "test" ? TEST_KEY_SIZE : undefined;
}
