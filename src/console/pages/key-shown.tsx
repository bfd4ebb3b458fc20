// The one time a key's text is shown: copy button, warning, where to put it.
import type { Child } from "hono/jsx";

export function KeyShown(p: { keyText: string; kind: "test" | "live"; appId: string; extra?: Child }) {
  return (
    <section aria-labelledby="new-key">
      <h2 id="new-key">Your new {p.kind} key</h2>
      <div class="notice warn" role="status">
        This is the only time the key is shown. Copy it now and keep it in a server-side environment variable; never put
        it in browser or app code, logs or repositories. If it leaks, reissue it.
      </div>
      <code class="key" id="key-text" data-testid="key-text">{p.keyText}</code>
      <div class="actions">
        <button type="button" data-copy="key-text">Copy key</button>
        <span id="key-text-status" role="status" aria-live="polite"></span>
      </div>
      {p.extra}
      <p><a href={`/console/apps/${p.appId}`}>I have saved it: back to the app</a></p>
      <script src="/console/static/copy.js" defer></script>
    </section>
  );
}
