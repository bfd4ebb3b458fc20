// Boxes whose content may be wider than the screen (code samples, tables): each scrolls
// inside itself rather than widening the page, so each is a named region that takes
// keyboard focus. Without the tab stop a keyboard user could not reach the hidden part
// (arrow keys scroll the focused box); the name tells a screen reader what the stop is.
// Every such box in the console comes from here, so none can miss either.
import type { Child } from "hono/jsx";

/** A wide table (or anything else) that scrolls sideways inside its own box. */
export function ScrollRegion(p: { label: string; children?: Child }) {
  return (
    <div class="scroll-region" role="region" aria-label={p.label} tabindex={0}>
      {p.children}
    </div>
  );
}

/**
 * Preformatted text, kept as written (a shell line's trailing backslash means something)
 * and scrolled when wide: a code sample by default, or plain text (a mail) with `code` false.
 */
export function Preformatted(p: { label: string; text: string; id?: string; code?: boolean }) {
  return (
    <pre class="scroll-region" role="region" aria-label={p.label} tabindex={0}>
      {p.code === false ? p.text : <code id={p.id}>{p.text}</code>}
    </pre>
  );
}
