// The landing page's before/after and the console playground in a real browser:
// Debian's Chromium driven by playwright-core against the real server (stub model: a
// centred ellipse, so a cut-out's corners are transparent) at 375 px wide. A new
// customer signs up, creates an app, drops a photo in its playground, sees the cut-out,
// switches its background, downloads the PNG, meets the errors next to the drop zone and
// finds the test call in the usage page. Screenshots go to test-results/console/.
// Skips when /usr/bin/chromium is absent (.ci/run installs it).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeImage } from "../../src/engine/imaging/index.ts";
import { MAX_BODY_BYTES } from "../../src/http/read-body.ts";
import { freshDataDir } from "../support/pglite-template.ts";
import { OPERATOR_TOKEN } from "../support/harness.ts";
import { startDevelopmentServer, stopAll } from "../support/server-process.ts";

const CHROMIUM = "/usr/bin/chromium";
const SHOTS = new URL("../../test-results/console/", import.meta.url);
const PHOTO = fileURLToPath(new URL("../fixtures/photos/chelsea.png", import.meta.url));

after(stopAll);

test("playground in Chromium at 375 px: photo in, cut-out shown and downloaded, errors beside the drop zone, call in usage", { skip: !existsSync(CHROMIUM) && "no /usr/bin/chromium", timeout: 180_000 }, async () => {
  const { chromium } = await import("playwright-core");
  const data = await freshDataDir();
  const profile = await mkdtemp(join(tmpdir(), "pixeldrop-chromium-"));
  await mkdir(SHOTS, { recursive: true });
  const server = await startDevelopmentServer({ DATA_DIR: data.dataDir, STUB_DELAY_MS: "300", POOL_SIZE: "1", THREADS_PER_SESSION: "1" });
  const base = server.url;
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 375, height: 800 },
    acceptDownloads: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const outsideRequests: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(base) && !r.url().startsWith("blob:") && !r.url().startsWith("data:")) outsideRequests.push(r.url());
    });
    const cspErrors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") cspErrors.push(m.text());
    });
    const shot = (name: string) => page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });
    const fitsWidth = async (what: string) => {
      const w = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(w <= 375, `${what} is ${w} px wide at a 375 px viewport`);
    };
    const focusByTab = async (test: string, max = 40) => {
      for (let i = 0; i < max; i++) {
        await page.keyboard.press("Tab");
        if (await page.evaluate((sel) => document.activeElement?.matches(sel) ?? false, test)) return;
      }
      assert.fail(`${test} not reachable with Tab`);
    };

    // Landing: the before/after, switched with the keyboard.
    await page.goto(`${base}/`);
    await page.getByRole("heading", { name: "See it work" }).waitFor();
    const loaded = await page.evaluate(() => [...document.querySelectorAll(".showcase img")].map((i) => (i as HTMLImageElement).naturalWidth));
    assert.deepEqual(loaded, [451, 451], "both pictures load from our own server");
    assert.ok(await page.getByTestId("showcase-cutout").isVisible());
    assert.match(await page.locator(".showcase figcaption").textContent() ?? "", /CC0/);
    await fitsWidth("landing page");
    await shot("10-landing-see-it-work");
    await focusByTab("#see-cutout");
    await page.keyboard.press("ArrowDown"); // radio group: the arrow moves to "Original photo"
    assert.equal(await page.locator("#see-original").isChecked(), true);
    assert.equal(await page.getByTestId("showcase-cutout").isVisible(), false, "toggle shows the original instead");

    // Sign up through the dev mailbox, create an app, the operator enables it.
    const email = `playground-${crypto.randomUUID()}@example.com`;
    await page.goto(`${base}/console/sign-up`);
    await page.getByLabel("E-mail address").fill(email);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Check your e-mail" }).waitFor();
    await page.goto(`${base}/console/dev/mailbox?to=${encodeURIComponent(email)}`);
    const link = /http:\/\/\S+\/console\/auth\/link\?token=\S+/.exec((await page.locator("[data-testid=mail] pre").first().textContent()) ?? "")?.[0];
    assert.ok(link);
    await page.goto(link!);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByLabel("App name").fill("Playground shop");
    await page.getByRole("button", { name: "Create app" }).click();
    const testKey = (await page.getByTestId("key-text").textContent())!.trim();
    await page.getByRole("link", { name: /back to the app/ }).click();
    const appId = /\/console\/apps\/(app_\w+)/.exec(page.url())![1];
    const enabled = await fetch(`${base}/admin/v1/apps/${appId}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ productEnabled: true }),
    });
    assert.equal(enabled.status, 200);

    await page.getByRole("link", { name: "Try an image with this app's test key" }).click();
    await page.getByRole("heading", { name: "Try an image" }).waitFor();
    assert.ok(!(await page.content()).includes(testKey.slice(8)), "the key text is not on the playground page");
    await fitsWidth("playground page");
    // Keyboard: the file chooser is reachable with Tab (the dialog itself is the OS's).
    await focusByTab("#pg-file");

    // Not an image, dropped on the drop zone: the gateway's refusal, next to the drop
    // zone, with its request ID.
    await page.locator("#pg-drop").evaluate((zone) => {
      const dt = new DataTransfer();
      dt.items.add(new File(["not a picture at all"], "notes.txt", { type: "text/plain" }));
      for (const type of ["dragenter", "dragover", "drop"]) zone.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    const error = page.getByTestId("pg-error");
    await error.waitFor();
    assert.match((await error.textContent())!, /\(400 invalid_parameter\)\. Request ID: req_\w+\./);
    assert.equal(await page.locator("#pg-file").getAttribute("aria-invalid"), "true");
    assert.equal(await page.locator("#pg-progress").isVisible(), false, "no progress left showing after an answer");
    await shot("11-playground-error-not-an-image");
    // Over 12 MB: said before anything is sent.
    await page.setInputFiles("#pg-file", { name: "huge.jpg", mimeType: "image/jpeg", buffer: Buffer.alloc(MAX_BODY_BYTES + 1) });
    assert.match((await error.textContent())!, /413 file_too_large/);

    // A real photo: progress, then the cut-out beside the original.
    await page.setInputFiles("#pg-file", PHOTO);
    await page.locator("#pg-progress").waitFor({ state: "visible" });
    await page.locator("#pg-result").waitFor({ state: "visible", timeout: 60_000 });
    assert.equal(await error.isVisible(), false, "the earlier error is cleared");
    assert.equal(await page.locator("#pg-progress").isVisible(), false);
    const sizes = await page.evaluate(() => ["pg-original", "pg-cutout"].map((id) => (document.getElementById(id) as HTMLImageElement).naturalWidth));
    assert.deepEqual(sizes, [451, 451]);
    const requestId = (await page.getByTestId("pg-request-id").textContent())!;
    assert.match(requestId, /^req_/);
    assert.equal(await page.locator("#pg-remaining").textContent(), "49");
    assert.equal(await page.getByTestId("pg-left").textContent(), "49", "the intro's count follows");
    assert.match((await page.locator("#pg-stage").getAttribute("class"))!, /checker/);

    // Backgrounds: black, then a colour (set through the CSS object model under the CSP).
    await page.getByLabel("Black").check();
    assert.match((await page.locator("#pg-stage").getAttribute("class"))!, /black/);
    await page.locator("#pg-colour").fill("#ff0000");
    assert.equal(await page.locator("#pg-stage").evaluate((el) => getComputedStyle(el).backgroundColor), "rgb(255, 0, 0)");
    assert.equal(await page.getByLabel("Colour", { exact: true }).isChecked(), true);
    await page.getByLabel("Checkerboard").check();
    // The snippets copy with the key placeholder.
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    await page.getByRole("button", { name: "Copy curl" }).click();
    await page.locator("#snippet-curl-status").getByText("Copied.").waitFor();
    assert.match(await page.evaluate(() => navigator.clipboard.readText()), /-H "X-Api-Key: \$PIXELDROP_TEST_KEY"/);
    await fitsWidth("playground with a result");
    await shot("12-playground-result");
    // On a wider screen the original and the cut-out sit side by side.
    await page.setViewportSize({ width: 1024, height: 800 });
    const tops = await page.locator(".compare figure").evaluateAll((fs) => fs.map((f) => Math.round(f.getBoundingClientRect().top)));
    assert.equal(tops.length, 2);
    assert.equal(tops[0], tops[1], "side by side");
    await shot("12b-playground-result-wide");
    await page.setViewportSize({ width: 375, height: 800 });

    // Download: a PNG whose corners are transparent.
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download PNG" }).click()]);
    assert.equal(download.suggestedFilename(), "chelsea-cutout.png");
    const png = new Uint8Array(await readFile((await download.path())!));
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const decoded = await decodeImage(png);
    assert.ok(decoded.ok);
    const { width, height, data: px } = decoded.image;
    const alphaAt = (x: number, y: number) => px[(y * width + x) * 4 + 3];
    assert.deepEqual([alphaAt(0, 0), alphaAt(width - 1, 0), alphaAt(0, height - 1), alphaAt(width - 1, height - 1)], [0, 0, 0, 0], "transparent corners");
    assert.ok(alphaAt(width >> 1, height >> 1) > 200, "an opaque centre");

    // The usage page shows the test call.
    await page.getByRole("link", { name: "Usage", exact: true }).click();
    await page.getByRole("cell", { name: requestId }).waitFor();
    assert.equal(await page.getByTestId("test-left").textContent(), "49");
    await fitsWidth("usage page");
    await shot("13-usage-after-playground");

    assert.deepEqual(outsideRequests, [], "no request leaves our own origin");
    assert.deepEqual(cspErrors.filter((t) => /Content Security Policy/i.test(t)), [], "nothing blocked by the CSP");
  } finally {
    await context.close();
    await server.kill("SIGTERM");
    await data.remove();
    await rm(profile, { recursive: true, force: true });
  }
});
