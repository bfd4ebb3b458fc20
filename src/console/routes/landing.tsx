// The short landing page at "/".
import type { Hono } from "hono";
import type { ConsoleEnv } from "../env.ts";
import { page } from "../http.tsx";

export function registerLanding(app: Hono<ConsoleEnv>): void {
  app.get("/", (c) =>
    page(
      c,
      "Remove image backgrounds with one API call",
      <>
        <p>
          Send an image to <code>POST /v1.0/removebg</code>, get a PNG with the background removed. Prepaid credit in
          KRW: 22 KRW per preview-size result, 110 KRW at full resolution. Test keys are free (50 calls a month).
        </p>
        <div class="actions">
          <a class="button" href="/console/sign-up">Sign up</a>
          <a class="button secondary" href="/console/sign-in">Sign in</a>
          <a class="button secondary" href="/console/docs">Read the docs</a>
        </div>
      </>,
    ),
  );
}
