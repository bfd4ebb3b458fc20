// Remote mode: each image goes to a running service through the client, which follows
// the retry contract (resends after 503 / 429 key_queue_full / connection errors). The
// API key is only ever handed to the client; messages name the error code and the
// request ID (what support needs), never the key.
import { createClient, PixeldropError, type ClientOptions, type RemoveOptions } from "../client/index.ts";
import type { Channels, Size } from "../contract/params.ts";
import type { Remover } from "./remover.ts";

/** Answers that will be the same for every later file: stop instead of sending them all. */
const KEY_REFUSED: ReadonlySet<string> = new Set(["invalid_api_key", "key_suspended"]);

export function createRemoteRemover(
  o: { apiKey: string; baseUrl: string; size: Size | undefined; channels?: Channels; bgColor?: string } & Pick<ClientOptions, "fetch" | "sleep" | "timeoutMs">,
): Remover {
  const client = createClient({ apiKey: o.apiKey, baseUrl: o.baseUrl, fetch: o.fetch, sleep: o.sleep, timeoutMs: o.timeoutMs });
  const options: RemoveOptions = {
    ...(o.size !== undefined ? { size: o.size } : {}),
    ...(o.channels !== undefined ? { channels: o.channels } : {}),
    ...(o.bgColor !== undefined ? { bgColor: o.bgColor } : {}),
  };
  let chargedKrw = 0;
  let balanceKrw: number | undefined;
  return {
    async remove(image) {
      try {
        const r = await client.removeBackground(image, options);
        chargedKrw += r.chargedKrw ?? 0;
        if (r.balanceKrw !== undefined) balanceKrw = r.balanceKrw;
        return { ok: true, png: r.bytes };
      } catch (err) {
        if (!(err instanceof PixeldropError)) throw err;
        const tried = err.attempts > 1 ? `, ${err.attempts} attempts` : "";
        const request = err.requestId ? `, request ${err.requestId}` : "";
        const status = err.status ? `HTTP ${err.status}` : "no answer";
        return { ok: false, message: `${err.code}: ${err.title} (${status}${request}${tried})`, stop: KEY_REFUSED.has(err.code) };
      }
    },
    describe() {
      const money = balanceKrw === undefined ? "" : `, charged ${chargedKrw} KRW, balance ${balanceKrw} KRW`;
      return `service ${o.baseUrl}${money}`;
    },
    close: async () => {},
  };
}
