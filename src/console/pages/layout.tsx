// The page frame: skip link, header navigation, main landmark. Every console page is
// rendered through it so the accessibility basics live in one place.
import type { Child } from "hono/jsx";

export interface LayoutProps {
  title: string;
  signedIn: boolean;
  csrf: string;
  children?: Child;
}

export function Layout({ title, signedIn, csrf, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Pixeldrop`}</title>
        <link rel="stylesheet" href="/console/static/style.css" />
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <a class="brand" href={signedIn ? "/console" : "/"}>Pixeldrop</a>
          <nav aria-label="Main">
            <ul>
              {signedIn ? (
                <>
                  <li><a href="/console/apps">Apps</a></li>
                  <li><a href="/console/credit">Credit</a></li>
                  <li><a href="/console/limits">Limits</a></li>
                  <li><a href="/console/usage">Usage</a></li>
                  <li><a href="/console/docs">Docs</a></li>
                  <li>
                    <form method="post" action="/console/sign-out" class="inline">
                      <input type="hidden" name="_csrf" value={csrf} />
                      <button type="submit" class="link">Sign out</button>
                    </form>
                  </li>
                  <li>
                    <form method="post" action="/console/sign-out-everywhere" class="inline">
                      <input type="hidden" name="_csrf" value={csrf} />
                      <button type="submit" class="link">Sign out everywhere</button>
                    </form>
                  </li>
                </>
              ) : (
                <>
                  <li><a href="/console/sign-up">Sign up</a></li>
                  <li><a href="/console/sign-in">Sign in</a></li>
                  <li><a href="/console/docs">Docs</a></li>
                </>
              )}
            </ul>
          </nav>
        </header>
        <main id="main" tabindex={-1}>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

/** The hidden CSRF field every form carries. */
export const Csrf = ({ value }: { value: string }) => <input type="hidden" name="_csrf" value={value} />;

/** A labelled input with its validation error next to it (aria-describedby). */
export function Field(p: {
  name: string;
  label: string;
  value?: string;
  error?: string;
  type?: string;
  hint?: string;
  inputmode?: "numeric" | "email" | "text";
  required?: boolean;
  autocomplete?: string;
}) {
  const id = `f-${p.name}`;
  const described = [p.hint ? `${id}-hint` : "", p.error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return (
    <div class={p.error ? "field invalid" : "field"}>
      <label for={id}>{p.label}</label>
      {p.hint ? <p class="hint" id={`${id}-hint`}>{p.hint}</p> : null}
      <input
        id={id}
        name={p.name}
        type={p.type ?? "text"}
        value={p.value ?? ""}
        inputmode={p.inputmode}
        required={p.required}
        autocomplete={p.autocomplete}
        aria-invalid={p.error ? "true" : undefined}
        aria-describedby={described || undefined}
      />
      {p.error ? <p class="error" id={`${id}-error`} role="alert">{p.error}</p> : null}
    </div>
  );
}

/** A short message box: success or problem. */
export const Notice = ({ kind, children }: { kind: "ok" | "warn" | "error"; children?: Child }) => (
  <div class={`notice ${kind}`} role={kind === "error" ? "alert" : "status"}>{children}</div>
);

export const krw = (n: number): string => `${n.toLocaleString("en-US")} KRW`;

/** Times as UTC ISO text without milliseconds: unambiguous when quoted to support. */
export const when = (ms: number | null | undefined): string =>
  ms === null || ms === undefined ? "—" : new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z").replace("T", " ");
