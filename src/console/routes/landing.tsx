// The landing page at "/": a before/after made by our own engine, the prices and the free
// test tier (from the billing modules, so they cannot drift), and the three ways in.
import type { Hono } from "hono";
import { FULL_PRICE_KRW, PREVIEW_PRICE_KRW } from "../../billing/prices.ts";
import { PREVIEW_MAX_PIXELS } from "../../contract/tiers.ts";
import { TEST_CALLS_PER_PERIOD } from "../../billing/test-quota.ts";
import { MAX_BODY_BYTES } from "../../http/read-body.ts";
import { MAX_PIXELS } from "../../engine/imaging/index.ts";
import { SHOWCASE } from "../assets.ts";
import type { ConsoleDeps } from "../deps.ts";
import type { ConsoleEnv } from "../env.ts";
import { baseUrl, page } from "../http.tsx";
import { krw } from "../pages/layout.tsx";
import { cliSnippet, curlSnippet, librarySnippet } from "../pages/snippets.ts";
import { Preformatted } from "../pages/scroll-region.tsx";

export function registerLanding(app: Hono<ConsoleEnv>, d: ConsoleDeps): void {
  app.get("/", (c) =>
    page(
      c,
      "Remove image backgrounds with one API call",
      <>
        <p>
          Send an image to <code>POST /v1.0/removebg</code>, get a PNG with the background removed. Prepaid credit in
          KRW, a free test key for every app, and the same engine as a library and a command-line tool.
        </p>
        <div class="actions">
          <a class="button" href="/console/sign-up">Sign up</a>
          <a class="button secondary" href="/console/sign-in">Sign in</a>
          <a class="button secondary" href="/console/docs">Read the docs</a>
        </div>

        <section class="showcase" aria-labelledby="see-h">
          <h2 id="see-h">See it work</h2>
          <fieldset>
            <legend>Show</legend>
            <label class="choice"><input type="radio" name="see" id="see-cutout" checked /> Cut-out</label>
            <label class="choice"><input type="radio" name="see" id="see-original" /> Original photo</label>
          </fieldset>
          <figure>
            <div class="frame checker cut-view" data-testid="showcase-cutout">
              <img src={SHOWCASE.cutout.path} width={SHOWCASE.cutout.width} height={SHOWCASE.cutout.height} alt="The cat's head cut out by Pixeldrop, on a checkerboard where the background was" />
            </div>
            <div class="frame orig-view">
              <img src={SHOWCASE.original.path} width={SHOWCASE.original.width} height={SHOWCASE.original.height} alt="The original photo: a tabby cat's head against a pale background" />
            </div>
            <figcaption>
              The cut-out was made by Pixeldrop's own engine at preview size (the checkerboard shows where it is
              transparent). <span class="licence">Photo: “Chelsea” the cat by Stéfan van der Walt, CC0 1.0 (public
              domain dedication), from the scikit-image sample data.</span>
            </figcaption>
          </figure>
        </section>

        <h2 id="prices">Prices</h2>
        <div class="cards">
          <div class="card">
            <p class="stat" data-testid="price-preview">{krw(PREVIEW_PRICE_KRW)}</p>
            <p>per preview-size result (up to {PREVIEW_MAX_PIXELS.toLocaleString("en-US")} pixels): <code>size=preview</code>, <code>small</code> or <code>regular</code></p>
          </div>
          <div class="card">
            <p class="stat" data-testid="price-full">{krw(FULL_PRICE_KRW)}</p>
            <p>per full-resolution result (<code>size=full</code>, <code>auto</code> or omitted); a smaller output is charged {krw(PREVIEW_PRICE_KRW)}</p>
          </div>
          <div class="card">
            <p class="stat" data-testid="test-tier">Free</p>
            <p>with each app's test key: {TEST_CALLS_PER_PERIOD} calls a month, preview size. Try it in the console's playground without copying a key.</p>
          </div>
        </div>
        <p class="hint">
          Prepaid credit in KRW; only successful calls are charged, every error is free. Images up to{" "}
          {MAX_BODY_BYTES.toLocaleString("en-US")} bytes and {MAX_PIXELS / 1_000_000} megapixels.
        </p>

        <h2 id="ways">Three ways in</h2>
        <div class="ways">
          <section class="card" aria-labelledby="way-api">
            <h3 id="way-api">The API</h3>
            <p>From any language, with your key in a server-side environment variable.</p>
            <Preformatted label="API example: curl" text={curlSnippet(baseUrl(d))} />
          </section>
          <section class="card" aria-labelledby="way-lib">
            <h3 id="way-lib">The library</h3>
            <p>The same engine in your own Node or Deno process: no key, no network.</p>
            <Preformatted label="Library example: TypeScript" text={librarySnippet()} />
          </section>
          <section class="card" aria-labelledby="way-cli">
            <h3 id="way-cli">The command line</h3>
            <p>A folder of photos in, a folder of cut-outs out; locally, or through the API with <code>--api-key</code>.</p>
            <Preformatted label="Command-line example" text={cliSnippet()} />
          </section>
        </div>
      </>,
    ),
  );
}
