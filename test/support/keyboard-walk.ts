// Keyboard-only walking for the browser tests. Tab (or Shift+Tab) moves focus stop by
// stop until a wanted control has it; every stop on the way is recorded with whether its
// focus can be seen. "Seen" means the element's outline or box-shadow now differs from
// how it looked before it had focus, and is not nothing: each element's unfocused look is
// recorded in the page before any key press that could focus it.
import type { Page } from "playwright-core";

export interface Stop {
  /** Tag, id and accessible name, for messages: `button "Create app"`. */
  what: string;
  tag: string;
  name: string;
  id: string;
  /** Focus indicator differs from the unfocused look (outline or box-shadow). */
  focusVisible: boolean;
  /** Focus left the page's controls (the body has it): the walk ran off the end. */
  offPage: boolean;
}

export type Want = (s: Stop) => boolean;

/** A control of this tag whose accessible name matches (a string means the whole name). */
export const control = (tag: string, name: string | RegExp): Want => (s) =>
  s.tag === tag && (typeof name === "string" ? s.name === name : name.test(s.name));

/** Records the unfocused look of every element not seen yet (the focused one excepted). */
async function recordLooks(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __pdLooks?: WeakMap<Element, string> };
    const looks = (w.__pdLooks ??= new WeakMap());
    for (const el of document.querySelectorAll("*")) {
      if (el === document.activeElement || looks.has(el)) continue;
      const s = getComputedStyle(el);
      looks.set(el, `${s.outlineStyle}|${s.outlineWidth}|${s.outlineColor}|${s.boxShadow}`);
    }
  });
}

async function currentStop(page: Page): Promise<Stop> {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) {
      return { what: "(page body)", tag: "body", name: "", id: "", focusVisible: false, offPage: true };
    }
    const s = getComputedStyle(el);
    const look = `${s.outlineStyle}|${s.outlineWidth}|${s.outlineColor}|${s.boxShadow}`;
    const before = (window as unknown as { __pdLooks?: WeakMap<Element, string> }).__pdLooks?.get(el);
    const drawn = (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 1) || s.boxShadow !== "none";
    const labelled = (el as HTMLInputElement).labels?.[0]?.textContent;
    const name = (el.getAttribute("aria-label") ?? labelled ?? el.textContent ?? "").replace(/\s+/g, " ").trim();
    const tag = el.tagName.toLowerCase();
    return {
      what: `${tag}${el.id ? `#${el.id}` : ""} "${name.slice(0, 60)}"`,
      tag,
      name,
      id: el.id,
      focusVisible: before !== undefined && before !== look && drawn,
      offPage: false,
    };
  });
}

export interface Walk {
  /** Call after every page load: records the page's unfocused looks. */
  arrived(): Promise<void>;
  /**
   * Presses Tab (Shift+Tab with `back`) until the last of `wanted` has focus, passing the
   * others on the way in this order. Fails if a stop shows no focus, a wanted control is
   * skipped or comes out of order, or the walk runs off the page or past `max` stops.
   * Returns the stops passed.
   */
  tabThrough(wanted: Want[], o?: { back?: boolean; max?: number; where?: string }): Promise<Stop[]>;
  /** Every stop of the walk so far. */
  readonly stops: Stop[];
}

export function keyboardWalk(page: Page): Walk {
  const stops: Stop[] = [];
  return {
    stops,
    async arrived() {
      await page.waitForLoadState("load");
      await recordLooks(page);
    },
    async tabThrough(wanted, o = {}) {
      const max = o.max ?? 60;
      const where = o.where ?? page.url();
      const passed: Stop[] = [];
      let next = 0;
      while (next < wanted.length) {
        if (passed.length >= max) throw new Error(`${where}: wanted control ${next + 1} of ${wanted.length} not reached in ${max} key presses; passed ${passed.map((s) => s.what).join(", ")}`);
        await recordLooks(page);
        await page.keyboard.press(o.back ? "Shift+Tab" : "Tab");
        const stop = await currentStop(page);
        passed.push(stop);
        stops.push(stop);
        if (stop.offPage) throw new Error(`${where}: focus left the page before wanted control ${next + 1} of ${wanted.length}; passed ${passed.map((s) => s.what).join(", ")}`);
        if (!stop.focusVisible) throw new Error(`${where}: no visible focus indicator on ${stop.what}`);
        const hit = wanted.findIndex((w) => w(stop));
        if (hit > next) throw new Error(`${where}: ${stop.what} reached before wanted control ${next + 1} of ${wanted.length} (out of order); passed ${passed.map((s) => s.what).join(", ")}`);
        if (hit === next) next++;
      }
      return passed;
    },
  };
}
