// The stand-in's list endpoints, as Stripe's API reference describes "List all …" and
// pagination: newest first; `limit` 1–100 (default 10); `starting_after` an object ID,
// the page then starts after it; `created` filtered by `created[gt|gte|lt|lte]` in unix
// seconds; answered `{ object: "list", url, has_more, data }`.
const CREATED = /^created\[(gt|gte|lt|lte)\]$/;

export function listAnswer<T extends { id: string; created: number }>(
  items: T[],
  query: Record<string, string>,
  url: string,
  pageSize: number,
): { status: number; body: unknown } {
  const bad = (message: string) => ({ status: 400, body: { error: { type: "invalid_request_error", code: "parameter_invalid", message } } });
  const limit = query.limit === undefined ? 10 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return bad("limit must be an integer between 1 and 100");
  let list = items.map((x, i) => ({ x, i }));
  for (const [name, value] of Object.entries(query)) {
    const m = CREATED.exec(name);
    if (!m) continue;
    const t = Number(value);
    if (!Number.isInteger(t)) return bad(`${name} must be a unix timestamp`);
    const keep = { gt: (c: number) => c > t, gte: (c: number) => c >= t, lt: (c: number) => c < t, lte: (c: number) => c <= t }[m[1] as "gt"];
    list = list.filter(({ x }) => keep(x.created));
  }
  // Newest first; objects of the same second in reverse order of creation.
  list.sort((a, b) => b.x.created - a.x.created || b.i - a.i);
  let start = 0;
  if (query.starting_after !== undefined) {
    const at = list.findIndex(({ x }) => x.id === query.starting_after);
    if (at < 0) return { status: 400, body: { error: { type: "invalid_request_error", code: "resource_missing", message: `No such object: '${query.starting_after}'` } } };
    start = at + 1;
  }
  const page = list.slice(start, start + Math.min(limit, pageSize)).map(({ x }) => x);
  return { status: 200, body: { object: "list", url, has_more: start + page.length < list.length, data: page } };
}
