// `npm start` on a bare machine (no NODE_ENV, HOST, PUBLIC_URL, secrets or stores set):
// it comes up with the embedded stores and production behaviour: it listens on 0.0.0.0,
// the developer mailbox is 404 (the sign-up mail is kept in the outbox, not served),
// no payment provider runs, and the mailed link names the default PUBLIC_URL whatever
// Host the request carried. The command is read from package.json, so it is what npm runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { listOutbox } from "../../src/mail/index.ts";
import { openDb } from "../../src/db/index.ts";
import { freePort } from "../support/free-port.ts";
import { freshDataDir } from "../support/pglite-template.ts";
import { startServer } from "../support/server-process.ts";

const START = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: { start: string } }).scripts.start;

test("npm start with NODE_ENV unset: production behaviour on the embedded stores, no developer mailbox", { timeout: 120_000 }, async () => {
  const [program, ...args] = START.split(" ");
  assert.equal(program, "node", `package.json start runs node: ${START}`);
  const data = await freshDataDir();
  const port = await freePort();
  // Unset (an empty value counts as unset) what the test runner or the shared server
  // helper would set; the stub model keeps the start quick (the model is not under test).
  const bare = { NODE_ENV: "", HOST: "", PUBLIC_URL: "", OPERATOR_TOKEN: "", KEY_PEPPER: "", SESSION_SECRET: "", SMTP_URL: "", PAYMENT_PROVIDER: "" };
  const server = await startServer({ ...bare, PORT: String(port), DATA_DIR: data.dataDir }, { command: { file: process.execPath, args } });
  try {
    const listening = JSON.parse(server.lines.find((l) => l.includes('"msg":"listening"'))!) as Record<string, unknown>;
    assert.deepEqual([listening.mode, listening.host, listening.publicUrl, listening.database, listening.payments], ["production", "0.0.0.0", `http://localhost:${port}`, "pglite", "none"]);
    assert.ok(server.lines.some((l) => l.includes("OPERATOR_TOKEN was not set")), "an operator token is generated and printed once");

    assert.equal((await fetch(`${server.url}/console/dev/mailbox`)).status, 404);

    // A sign-up, with a forged Host: the mail is kept in the outbox with a link to PUBLIC_URL.
    const form = await fetch(`${server.url}/console/sign-up`);
    const cookie = form.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const email = `bare-${crypto.randomUUID()}@example.com`;
    const sent = await fetch(`${server.url}/console/sign-up`, {
      method: "POST",
      headers: { cookie, host: "evil.example", "x-forwarded-host": "evil.example", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, email }).toString(),
    });
    assert.equal(sent.status, 200, await sent.text());
  } finally {
    await server.kill("SIGTERM");
  }
  const db = await openDb({ dataDir: join(data.dataDir, "pglite") });
  try {
    const [mail] = await listOutbox(db, { limit: 1 });
    assert.ok(mail, "the mail kept in the outbox");
    assert.match(mail.text, new RegExp(`http://localhost:${port}/console/auth/link\\?token=`));
    assert.doesNotMatch(mail.text, /evil\.example/);
  } finally {
    await db.close();
    await data.remove();
  }
});
