// Scans captured text (log lines, server output) for API keys: the whole key, its
// base62 body, and every 12-character piece of the body (a stored label shows 4 + 4
// characters, so 12 in a row can only come from the key itself). Abuse suites collect
// every key they issue and call this once at the end over everything that was logged.

/** The texts that must never appear: the key, its body and every 12-character piece of the body. */
export function keyPieces(key: string): string[] {
  const body = key.replace(/^pd_(test|live)_/, "");
  const pieces = new Set([key, body]);
  for (let i = 0; i + 12 <= body.length; i++) pieces.add(body.slice(i, i + 12));
  return [...pieces];
}

/** Where, if anywhere, a key (or a piece of one) shows up in `lines`. */
export function findKeyLeaks(lines: readonly string[], keys: readonly string[]): string[] {
  const leaks: string[] = [];
  const text = lines.join("\n");
  for (const key of keys) {
    for (const piece of keyPieces(key)) {
      const at = text.indexOf(piece);
      if (at >= 0) {
        // Name the key by its public label only, so the failure message leaks nothing either.
        leaks.push(`${key.slice(0, 12)}…${key.slice(-4)} (piece of ${piece.length} chars at offset ${at})`);
        break;
      }
    }
  }
  return leaks;
}

/** Every API key in a JSON answer or page: issued keys are collected from what the service returned. */
export function keysIn(text: string): string[] {
  return [...text.matchAll(/pd_(?:test|live)_[0-9A-Za-z]{40}/g)].map((m) => m[0]);
}
