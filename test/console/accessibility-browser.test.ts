// The console's accessibility in a real browser: Debian's Chromium driven by
// playwright-core against the real server (stub model). axe-core's WCAG 2.1 A and AA
// rules run over the landing page, the API reference and every page the console serves,
// signed out and signed in, at 1280 and 375 px; any serious or critical finding fails,
// naming the rule and the element. Then a new customer goes the main path with the
// keyboard alone (Tab, Shift+Tab, Enter, Space, and typing into fields): each control is
// reached in order and shows where focus is. One browser for the file; each test has a
// context of its own. The per-page summary goes to test-results/console/axe-summary.json.
// Skips when /usr/bin/chromium is absent (.ci/run installs it).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { axeFindings, countByImpact, describeFinding, isBlocking, type AxeFinding } from "../support/axe.ts";
import { makeHarness, OPERATOR_TOKEN } from "../support/harness.ts";
import { control, keyboardWalk } from "../support/keyboard-walk.ts";
import { freshDataDir } from "../support/pglite-template.ts";
import { startDevelopmentServer, stopAll, type ServerProcess } from "../support/server-process.ts";

const CHROMIUM = "/usr/bin/chromium";
const skip = !existsSync(CHROMIUM) && "no /usr/bin/chromium (apt-get install chromium; .ci/run installs it)";
const RESULTS = new URL("../../test-results/console/", import.meta.url);
const PHOTO = fileURLToPath(new URL("../fixtures/photos/chelsea.png", import.meta.url));
const WIDTHS = [1280, 375];

let browser: Browser;
let server: ServerProcess;
let data: Awaited<ReturnType<typeof freshDataDir>>;

before(async () => {
  if (skip) return;
  const { chromium } = await import("playwright-core");
  data = await freshDataDir();
  [server, browser] = await Promise.all([
    startDevelopmentServer({ DATA_DIR: data.dataDir, STUB_DELAY_MS: "0", POOL_SIZE: "1", THREADS_PER_SESSION: "1" }),
    chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    }),
  ]);
});

after(async () => {
  await browser?.close();
  await stopAll();
  await data?.remove();
});

async function newPage(width: number): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  return { context, page: await context.newPage() };
}

async function enableProduct(appId: string): Promise<void> {
  const res = await fetch(`${server.url}/admin/v1/apps/${appId}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ productEnabled: true }),
  });
  assert.equal(res.status, 200, await res.text());
}

/** The verification link in the newest mail to `email`, read from the developer mailbox. */
async function mailedLink(page: Page, email: string): Promise<string> {
  await page.goto(`${server.url}/console/dev/mailbox?to=${encodeURIComponent(email)}`);
  const text = (await page.locator("[data-testid=mail] pre").first().textContent()) ?? "";
  const link = /http:\/\/\S+\/console\/auth\/link\?token=\S+/.exec(text)?.[0];
  assert.ok(link, `a link in the mail to ${email}`);
  return link;
}

/** The console's GET pages (static files and pictures left out), as path patterns. */
async function consolePages(): Promise<string[]> {
  const h = await makeHarness({ embedded: true, env: { NODE_ENV: "development" } });
  try {
    const paths = h.app.routes
      .filter((r) => r.method === "GET" && (r.path === "/" || r.path === "/console" || r.path.startsWith("/console/")))
      .map((r) => r.path)
      .filter((p) => !p.startsWith("/console/static/"));
    return [...new Set(paths)];
  } finally {
    await h.close();
  }
}

const matchesRoute = (route: string, path: string) =>
  new RegExp(`^${route.replace(/:[^/]+/g, "[^/]+")}$`).test(path);

test("axe (WCAG 2.1 A and AA): no serious or critical finding on any page, signed out and signed in, at 1280 and 375 px", { skip, timeout: 180_000 }, async () => {
  const base = server.url;
  const { context, page } = await newPage(WIDTHS[0]);
  const summary: Record<string, Record<string, Record<string, number>>> = {};
  const blocking: string[] = [];
  const opened = new Set<string>();
  page.on("request", (r) => {
    if (r.isNavigationRequest() && r.method() === "GET" && r.url().startsWith(base)) opened.add(new URL(r.url()).pathname);
  });
  /** axe over the page as it stands, at each width. */
  const check = async (name: string) => {
    summary[name] = {};
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      const findings: AxeFinding[] = await axeFindings(page);
      summary[name][`${width}px`] = countByImpact(findings);
      for (const f of findings.filter(isBlocking)) blocking.push(`${name} (${new URL(page.url()).pathname}) at ${width} px: ${describeFinding(f)}`);
    }
    await page.setViewportSize({ width: WIDTHS[0], height: 900 });
  };
  const visit = async (path: string, name: string) => {
    await page.goto(`${base}${path}`);
    await check(name);
  };

  try {
    // Signed out.
    await visit("/", "landing");
    await visit("/docs/api", "API reference");
    await visit("/console/docs", "docs");
    await visit("/console/sign-in", "sign-in");
    await visit("/console/sign-up", "sign-up");
    await page.getByLabel("E-mail address").fill("not-an-address");
    await page.getByRole("button", { name: "Send verification link" }).click();
    await page.getByRole("alert").waitFor();
    await check("sign-up, address refused");
    const email = `axe-${crypto.randomUUID()}@example.com`;
    await page.getByLabel("E-mail address").fill(email);
    await page.getByRole("button", { name: "Send verification link" }).click();
    await page.getByRole("heading", { name: "Check your e-mail" }).waitFor();
    await check("check your e-mail");
    const link = await mailedLink(page, email);
    await check("developer mailbox");
    await page.goto(link);
    await check("sign-in link");

    // Signed in.
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByText("organization is ready").waitFor();
    await check("apps, welcome");
    await page.getByLabel("App name").fill("x".repeat(101));
    await page.getByRole("button", { name: "Create app" }).click();
    await page.getByRole("alert").waitFor();
    await check("apps, name refused");
    await page.getByLabel("App name").fill("Axe shop");
    await page.getByRole("button", { name: "Create app" }).click();
    await page.getByTestId("key-text").waitFor();
    await check("new test key");
    await page.getByRole("link", { name: /back to the app/ }).click();
    const appId = /\/console\/apps\/(app_\w+)/.exec(page.url())?.[1];
    assert.ok(appId, page.url());
    await check("app");
    const reissue = await page.locator('a[aria-label^="Reissue test key"]').getAttribute("href");
    const remove = await page.locator('a[aria-label^="Delete test key"]').getAttribute("href");
    await visit(reissue!, "reissue key?");
    await visit(remove!, "delete key?");
    await visit(`/console/apps/${appId}/delete`, "delete app?");
    await page.goto(`${base}/console/apps/${appId}`);
    await page.getByRole("button", { name: "Apply for use" }).click();
    await page.getByText("In review").first().waitFor();
    await check("app, applied for use");
    await enableProduct(appId);

    await visit(`/console/apps/${appId}/playground`, "playground");
    await page.setInputFiles("#pg-file", PHOTO);
    await page.locator("#pg-result").waitFor({ state: "visible", timeout: 60_000 });
    await check("playground with a result");

    await visit("/console/credit", "credit");
    await page.getByLabel("50,000 KRW").check();
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("button", { name: /^Pay 50,000 KRW/ }).waitFor();
    await check("confirm top-up");
    await page.getByRole("button", { name: /^Pay 50,000 KRW/ }).click();
    await page.getByText("Top-up complete").waitFor();
    await check("credit after a top-up");
    await visit("/console/limits", "limits");
    await visit("/console/usage", "usage");
    await visit("/console/docs", "docs, signed in");
    await visit("/console", "console start");
    await visit("/", "landing, signed in");
    await visit("/console/apps/app_nosuchapp", "not found");
    await visit("/console/dev/mailbox", "developer mailbox, signed in");

    // Every page the console serves was opened (a new page cannot be left out).
    const missed = (await consolePages()).filter((route) => ![...opened].some((p) => matchesRoute(route, p)));
    assert.deepEqual(missed, [], "console pages the walk never opened: add them above");
  } finally {
    await context.close();
    await mkdir(RESULTS, { recursive: true });
    await writeFile(new URL("axe-summary.json", RESULTS), JSON.stringify(summary, null, 2) + "\n");
  }
  console.log(Object.entries(summary).map(([name, w]) => `${name}: ${Object.entries(w).map(([width, c]) => `${width} ${JSON.stringify(c)}`).join(", ")}`).join("\n"));
  assert.deepEqual(blocking, [], `serious or critical accessibility findings:\n${blocking.join("\n")}`);
});

test("keyboard only: sign up, open the mailed link, create an app, issue a test key, try the playground", { skip, timeout: 120_000 }, async () => {
  const base = server.url;
  const { context, page } = await newPage(375);
  const walk = keyboardWalk(page);
  const link = (name: string | RegExp) => control("a", name);
  const button = (name: string | RegExp) => control("button", name);
  const skipLink = link("Skip to content");
  const loaded = async (url: RegExp) => {
    await page.waitForURL(url);
    await walk.arrived();
  };
  try {
    // Landing: the header's "Sign up" after the skip link and the brand.
    await page.goto(`${base}/`);
    await walk.arrived();
    await walk.tabThrough([skipLink, link("Pixeldrop"), link("Sign up")]);
    await page.keyboard.press("Enter");
    await loaded(/\/console\/sign-up$/);

    // Sign-up: the address, then the button (Space presses it).
    await walk.tabThrough([skipLink, link("Sign up"), link("Sign in"), link("Docs"), control("input", "E-mail address")]);
    const email = `keyboard-${crypto.randomUUID()}@example.com`;
    await page.keyboard.type(email);
    await walk.tabThrough([button("Send verification link")]);
    await page.keyboard.press("Space");
    await page.getByRole("heading", { name: "Check your e-mail" }).waitFor();

    // The link opened from the mail (the mail client is not ours), then Continue.
    await page.goto(await mailedLink(page, email));
    await walk.arrived();
    await walk.tabThrough([skipLink, button("Continue")]);
    await page.keyboard.press("Enter");
    await loaded(/\/console\/apps\?welcome=1$/);

    // Create an app: its test key is shown once.
    await walk.tabThrough([link("Apps"), link("Credit"), link("Limits"), link("Usage"), link("Docs"), button("Sign out"), control("input", "App name")]);
    await page.keyboard.type("Keyboard shop");
    await walk.tabThrough([button("Create app")]);
    await page.keyboard.press("Enter");
    await page.getByTestId("key-text").waitFor();
    await walk.arrived();
    await walk.tabThrough([button("Copy key"), link(/back to the app/)]);
    await page.keyboard.press("Enter");
    await loaded(/\/console\/apps\/app_\w+$/);
    const appId = /\/console\/apps\/(app_\w+)/.exec(page.url())![1];

    // Issue a test key: delete the one made with the app (confirming with Space after
    // Shift+Tab back from Cancel), then the app page offers "Issue test key".
    await walk.tabThrough([control("select", /Product/), button("Apply for use"), link("Try an image with this app's test key"), control("div", "Keys"), link(/^Delete test key/)]);
    await page.keyboard.press("Enter");
    await loaded(/\/delete$/);
    await walk.tabThrough([button("Delete key"), link("Cancel")]);
    await walk.tabThrough([button("Delete key")], { back: true });
    await page.keyboard.press("Space");
    await loaded(/done=keydeleted$/);
    await walk.tabThrough([button("Issue test key")]);
    await page.keyboard.press("Enter");
    await page.getByTestId("key-text").waitFor();
    assert.match((await page.getByTestId("key-text").textContent()) ?? "", /pd_test_/);
    await walk.arrived();
    await walk.tabThrough([button("Copy key"), link(/back to the app/)]);
    await page.keyboard.press("Enter");
    await loaded(/\/console\/apps\/app_\w+$/);

    // The playground (once an operator has enabled the product): the file chooser opens
    // from the keyboard, the result takes focus, and its controls and the snippets follow.
    await enableProduct(appId);
    await page.reload();
    await walk.arrived();
    await walk.tabThrough([link("Try an image with this app's test key")]);
    await page.keyboard.press("Enter");
    await loaded(/\/playground$/);
    await walk.tabThrough([control("input", "Choose an image, or drop one here")]);
    const [chooser] = await Promise.all([page.waitForEvent("filechooser"), page.keyboard.press("Space")]);
    await chooser.setFiles(PHOTO);
    await page.waitForFunction(() => document.activeElement?.id === "pg-result-h", undefined, { timeout: 60_000 });
    await walk.arrived();
    await walk.tabThrough([
      control("input", "Checkerboard"),
      control("input", "Colour value"),
      link("Download PNG"),
      control("pre", "curl snippet"),
      button("Copy curl"),
      control("pre", "TypeScript client snippet"),
      button("Copy TypeScript client"),
      link("Back to the app"),
    ]);
    assert.match((await page.getByTestId("pg-request-id").textContent()) ?? "", /^req_/);
    console.log(`keyboard walk: ${walk.stops.length} stops, each with a visible focus indicator`);
  } finally {
    await context.close();
  }
});
