// Wrong operator tokens, counted per client (TRUST_PROXY's client address): after
// OPERATOR_TOKEN_GUESSES wrong tokens within OPERATOR_TOKEN_WINDOW_MS, that client's
// next tokens are not compared at all but answered 429 with Retry-After, until the
// oldest counted one leaves the window (docs/DECISIONS.md "Operator token"). A refused
// token is not counted, so a flood does not lengthen its own block.
//
// In process and bounded: at most OPERATOR_TOKEN_CLIENTS_MAX clients are remembered,
// each with at most OPERATOR_TOKEN_GUESSES times; past that the client longest without
// a wrong token is forgotten first. Each process counts on its own, so N gateways allow
// N times the guesses; the operator API must keep answering when Redis does not, which
// is why the shared limiter is not used here.

/** Wrong tokens a client may present per window before its tokens are refused unread. */
export const OPERATOR_TOKEN_GUESSES = 10;
export const OPERATOR_TOKEN_WINDOW_MS = 60_000;
/** Clients remembered at once (memory stays bounded under a flood from many addresses). */
export const OPERATOR_TOKEN_CLIENTS_MAX = 10_000;

export interface TokenThrottle {
  /** Milliseconds until a token from `client` is compared again; 0 when it is compared now. */
  blockedFor(client: string): number;
  /** `client` presented a wrong token. */
  wrong(client: string): void;
}

export function createTokenThrottle(
  now: () => number,
  o: { guesses?: number; windowMs?: number; clientsMax?: number } = {},
): TokenThrottle {
  const guesses = o.guesses ?? OPERATOR_TOKEN_GUESSES;
  const windowMs = o.windowMs ?? OPERATOR_TOKEN_WINDOW_MS;
  const clientsMax = o.clientsMax ?? OPERATOR_TOKEN_CLIENTS_MAX;
  // Times of the wrong tokens still in the window, oldest first; Map order: least recent client first.
  const clients = new Map<string, number[]>();

  const recent = (client: string, t: number): number[] | undefined => {
    const times = clients.get(client);
    if (!times) return undefined;
    while (times.length > 0 && times[0]! <= t - windowMs) times.shift();
    if (times.length === 0) clients.delete(client);
    return times;
  };

  return {
    blockedFor(client) {
      const t = now();
      const times = recent(client, t);
      return times && times.length >= guesses ? times[0]! + windowMs - t : 0;
    },
    wrong(client) {
      const t = now();
      const times = recent(client, t) ?? [];
      clients.delete(client);
      if (clients.size >= clientsMax) clients.delete(clients.keys().next().value!);
      if (times.length < guesses) times.push(t);
      clients.set(client, times);
    },
  };
}
