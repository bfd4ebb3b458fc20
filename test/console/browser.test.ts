// The console in a real browser: Debian's Chromium (never a downloaded one) driven by
// playwright-core against the real server on a loopback port. One customer goes from
// sign-up to a paid call they can find in the usage chart and request log, at 375 px
// wide, signing up with the keyboard alone. Screenshots go to test-results/console/.
// Skips when /usr/bin/chromium is absent (.ci/run installs it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshDataDir } from "../support/pglite-template.ts";
import { fixture } from "../support/harness.ts";
import { freePort } from "../support/free-port.ts";
import { TS_LOADER } from "../support/ts-loader.ts";

const CHROMIUM = "/usr/bin/chromium";
const OPERATOR = "browser-test-operator-token-0123456789";
const SHOTS = new URL("../../test-results/console/", import.meta.url);


async function startServer(dataDir: string, port: number): Promise<{ child: ChildProcess; output: string[] }> {
  const child = spawn(process.execPath, [...TS_LOADER, "src/main.ts"], {
    cwd: new URL("../../", import.meta.url),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      INFERENCE_BACKEND: "stub",
      STUB_DELAY_MS: "0",
      POOL_SIZE: "1",
      THREADS_PER_SESSION: "1",
      OPERATOR_TOKEN: OPERATOR,
      // A developer's own server: the mailbox is served, the payment sandbox is on, and
      // mailed links name this server.
      NODE_ENV: "development",
      PAYMENT_PROVIDER: "sandbox",
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output.join("")}`)), 60_000);
    const onData = (b: Buffer) => {
      output.push(b.toString());
      if (output.join("").includes('"listening"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (b: Buffer) => output.push(b.toString()));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited ${code}:\n${output.join("")}`));
    });
  });
  return { child, output };
}

test("sign-up to a paid call seen in usage, in Chromium at 375 px", { skip: !existsSync(CHROMIUM) && "no /usr/bin/chromium", timeout: 120_000 }, async () => {
  const { chromium } = await import("playwright-core");
  const data = await freshDataDir();
  const profile = await mkdtemp(join(tmpdir(), "pixeldrop-chromium-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  await mkdir(SHOTS, { recursive: true });
  const server = await startServer(data.dataDir, port);
  // A fresh profile directory (playwright passes it as --user-data-dir).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 375, height: 800 },
    args: [
      "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync",
    ],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const shot = (name: string) => page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });
    const fitsWidth = async (what: string) => {
      const w = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(w <= 375, `${what} is ${w} px wide at a 375 px viewport`);
    };

    await page.goto(`${base}/`);
    await fitsWidth("landing page");
    await shot("01-landing");
    await page.getByRole("link", { name: "Sign up" }).first().click();

    // Keyboard only: Tab to the e-mail field, type, Enter.
    const email = `browser-${crypto.randomUUID()}@example.com`;
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press("Tab");
      if (await page.evaluate(() => document.activeElement?.getAttribute("name") === "email")) break;
    }
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("name")), "email", "e-mail field reachable by Tab");
    await page.keyboard.type(email);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Check your e-mail" }).waitFor();
    await fitsWidth("check-mail page");

    // The developer mailbox holds the verification mail.
    await page.goto(`${base}/console/dev/mailbox?to=${encodeURIComponent(email)}`);
    const mailText = await page.locator("[data-testid=mail] pre").first().textContent();
    const link = /http:\/\/\S+\/console\/auth\/link\?token=\S+/.exec(mailText ?? "")?.[0];
    assert.ok(link, "verification link in the mail");
    await page.goto(link!);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByText("organization is ready").waitFor();
    await shot("02-apps-empty");

    await page.getByLabel("App name").fill("Browser shop");
    await page.getByRole("button", { name: "Create app" }).click();
    const testKey = await page.getByTestId("key-text").textContent();
    assert.match(testKey ?? "", /^pd_test_/);
    await fitsWidth("new key page");
    await shot("03-test-key-shown");
    await page.getByRole("link", { name: /back to the app/ }).click();
    const appId = /\/console\/apps\/(app_\w+)/.exec(page.url())?.[1];
    assert.ok(appId);

    await page.getByRole("button", { name: "Apply for use" }).click();
    await page.getByText("In review").first().waitFor();
    // The operator enables the product.
    const enabled = await fetch(`${base}/admin/v1/apps/${appId}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${OPERATOR}`, "content-type": "application/json" },
      body: JSON.stringify({ productEnabled: true }),
    });
    assert.equal(enabled.status, 200);
    await page.reload();
    await page.getByRole("button", { name: "Issue live key" }).click();
    const liveKey = (await page.getByTestId("key-text").textContent())?.trim();
    assert.match(liveKey ?? "", /^pd_live_/);
    await shot("04-live-key-shown");

    await page.getByRole("link", { name: "Credit" }).click();
    await page.getByLabel("50,000 KRW").check();
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("button", { name: /^Pay 50,000 KRW/ }).click();
    await page.getByText("Top-up complete").waitFor();
    assert.equal(await page.getByTestId("balance").textContent(), "50,000 KRW");
    await fitsWidth("credit page");
    await shot("05-credit");

    const form = new FormData();
    form.append("image_file", new Blob([fixture("images/jpeg-baseline.jpg") as Uint8Array<ArrayBuffer>]), "photo.jpg");
    form.append("size", "preview");
    const call = await fetch(`${base}/v1.0/removebg`, { method: "POST", headers: { "x-api-key": liveKey! }, body: form });
    assert.equal(call.status, 200, await call.clone().text());
    const requestId = call.headers.get("x-pd-request-id")!;

    await page.getByRole("link", { name: "Usage" }).click();
    assert.ok((await page.locator('#chart-calls rect[data-app="Browser shop"]').count()) >= 1, "call in the chart");
    await page.getByRole("cell", { name: requestId }).waitFor();
    await fitsWidth("usage page");
    await shot("06-usage");
    await page.getByLabel("Request ID or error code").fill(requestId.slice(0, 14));
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("cell", { name: requestId }).waitFor();

    await page.goto(`${base}/console/docs`);
    await fitsWidth("docs page");
    await shot("07-docs");
  } finally {
    await context.close();
    server.child.kill("SIGTERM");
    await new Promise((r) => server.child.once("exit", r));
    await data.remove();
    await rm(profile, { recursive: true, force: true });
  }
});
