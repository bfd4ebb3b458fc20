// Writing a request's log row when the store may be dropping connections. The row of a
// charged call is the customer's record of that charge (usage page, support), so it is
// asked again a few times like the capture before it; other rows (errors, test calls)
// get one try, so an outage does not slow every refusal down.
import type { Failure } from "../http/api-error.ts";
import { isStoreUnavailable } from "../http/store-unavailable.ts";

/**
 * A refusal no app can be named for (no key, a malformed or unknown key, the
 * invalid-key guard) writes no request-log row: nobody's usage page shows it, and a
 * flood of them would otherwise cost a database write each. Its answer is
 * still in the access log with its request ID, which is where support looks it up.
 * A suspended key keeps its row: it names a key we issued.
 */
export function isUnattributableRefusal(f: Failure): boolean {
  return f.code === "invalid_api_key" || f.code === "rate_limited";
}

/**
 * Waits between tries of a charged call's row (4 tries). Few: against a frozen store each
 * try costs a query timeout, and a row still not written goes to the reconciler, which
 * writes it once the store is back (removebg.ts).
 */
export const CHARGED_ROW_WAITS_MS = [250, 500, 1000] as const;

export async function writeLogRow<R extends { chargedKrw: number }>(
  write: (row: R) => Promise<void>,
  row: R,
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  const waits = row.chargedKrw > 0 ? CHARGED_ROW_WAITS_MS : [];
  for (let i = 0; ; i++) {
    try {
      return await write(row);
    } catch (err) {
      if (i >= waits.length || !isStoreUnavailable(err)) throw err;
      await sleep(waits[i]!);
    }
  }
}
