// The playground's drop zone and result area. The script (/console/static/playground.js)
// finds its elements by these IDs; without it only the notice is useful.
import { MAX_PIXELS } from "../../engine/imaging/index.ts";

export function PlaygroundForm(p: { action: string; csrf: string; maxBytes: number }) {
  return (
    <form id="pg-form" class="playground" data-action={p.action} data-csrf={p.csrf} data-max-bytes={String(p.maxBytes)} aria-labelledby="pg-h">
      <h2 id="pg-h">Try an image</h2>
      <noscript><p class="notice warn">The playground needs JavaScript. The snippets below make the same call.</p></noscript>
      <div class="dropzone" id="pg-drop">
        <label for="pg-file">Choose an image, or drop one here</label>
        <p class="hint" id="pg-file-hint">
          JPEG, PNG or WebP, at most {p.maxBytes.toLocaleString("en-US")} bytes and {MAX_PIXELS / 1_000_000} megapixels. Removal starts as soon
          as you choose.
        </p>
        <input type="file" id="pg-file" name="image_file" accept="image/jpeg,image/png,image/webp" aria-describedby="pg-file-hint pg-error" />
      </div>
      <div class="actions">
        <button type="submit" id="pg-submit">Remove background</button>
      </div>
      <div id="pg-progress" class="progress" hidden>
        <progress id="pg-bar" max="100" aria-labelledby="pg-status"></progress>
        <span id="pg-status" role="status" aria-live="polite"></span>
      </div>
      <p id="pg-error" class="error" role="alert" data-testid="pg-error" hidden></p>
    </form>
  );
}

const BACKGROUNDS = [
  ["checker", "Checkerboard"],
  ["white", "White"],
  ["black", "Black"],
  ["colour", "Colour"],
] as const;

export function PlaygroundResult() {
  return (
    <section id="pg-result" aria-labelledby="pg-result-h" hidden>
      <h2 id="pg-result-h" tabindex={-1}>Result</h2>
      <div class="compare">
        <figure>
          <div class="stage checker"><img id="pg-original" alt="The image you chose" /></div>
          <figcaption>Original</figcaption>
        </figure>
        <figure>
          <div class="stage checker" id="pg-stage"><img id="pg-cutout" alt="The cut-out: your image with its background removed" data-testid="pg-cutout" /></div>
          <figcaption>Cut-out</figcaption>
        </figure>
      </div>
      <fieldset class="bg-choice">
        <legend>Background behind the cut-out</legend>
        {BACKGROUNDS.map(([value, label]) => (
          <label class="choice">
            <input type="radio" name="pg-bg" value={value} checked={value === "checker"} /> {label}
          </label>
        ))}
        <label class="choice" for="pg-colour">Colour value</label>
        <input type="color" id="pg-colour" value="#3a7bd5" />
      </fieldset>
      <div class="actions">
        <a id="pg-download" class="button" href="#" download="cutout.png">Download PNG</a>
      </div>
      <dl class="facts">
        <dt>Request ID</dt><dd><code id="pg-request-id" data-testid="pg-request-id"></code></dd>
        <dt>Size</dt><dd id="pg-size"></dd>
        <dt>Processing</dt><dd id="pg-ms"></dd>
        <dt>Test calls left</dt><dd id="pg-remaining"></dd>
      </dl>
    </section>
  );
}
