// The API reference as one self-contained HTML page (inline CSS, no scripts, no CDN),
// rendered on the server from the OpenAPI document: operations by tag, parameters,
// request bodies, response headers and the error table of each operation.
import { createHash } from "node:crypto";
import type { Child } from "hono/jsx";
import { inlineStyleCsp } from "../http/security-headers.ts";
import type { OpenApiDocument } from "./document.ts";

type Json = Record<string, any>;

const CSS = `
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d232a;background:#fafbfc}
main{max-width:64rem;margin:0 auto;padding:1rem 1.5rem 4rem}
h1{margin-bottom:.2rem}h2{margin-top:2.5rem;border-bottom:2px solid #d9dee4}
section.op{background:#fff;border:1px solid #d9dee4;border-radius:6px;padding:.2rem 1rem 1rem;margin:1.2rem 0}
.verb{display:inline-block;min-width:4.2rem;font:600 13px monospace;text-transform:uppercase;padding:.15rem .4rem;border-radius:4px;color:#fff;background:#4b5563;text-align:center}
.get{background:#2563eb}.post{background:#15803d}.put{background:#b45309}.patch{background:#7c3aed}.delete{background:#b91c1c}
code,.path{font-family:ui-monospace,monospace}.path{font-size:1.05rem;font-weight:600;margin-left:.4rem}
table{border-collapse:collapse;width:100%;margin:.4rem 0 1rem;font-size:14px}
th,td{border-bottom:1px solid #e5e9ee;text-align:left;padding:.3rem .5rem;vertical-align:top}
th{background:#f1f4f7}.badge{font-size:12px;border:1px solid #9ca3af;border-radius:3px;padding:0 .3rem;margin-left:.4rem}
nav ul{columns:2;padding-left:1.2rem}
`;

/** The page's Content-Security-Policy: its one inline style allowed by hash, nothing else inline. */
export const REFERENCE_CSP = inlineStyleCsp(createHash("sha256").update(CSS).digest("base64"));

/** Text whose `backticked` parts (the document's Markdown code spans) become <code>. */
function Md(props: { text: unknown }): Child {
  const parts = String(props.text ?? "").split("`");
  return <>{parts.map((p, i) => (i % 2 === 1 ? <code>{p}</code> : p))}</>;
}

function refName(s: Json | undefined): string | undefined {
  return typeof s?.$ref === "string" ? s.$ref.split("/").pop() : undefined;
}

function schemaOf(doc: OpenApiDocument, s: Json | undefined): Json {
  const name = refName(s);
  return name ? (doc.components as Json).schemas[name] : (s ?? {});
}

/** A short human description of a JSON Schema's type and limits. */
function typeText(s: Json): string {
  if ("not" in s) return "not accepted";
  const parts: string[] = [];
  if (s.anyOf) parts.push((s.anyOf as Json[]).map(typeText).join(" or "));
  else if (s.const !== undefined) parts.push(JSON.stringify(s.const));
  else if (s.enum) parts.push((s.enum as unknown[]).map((v) => JSON.stringify(v)).join(" | "));
  else if (s.contentMediaType) parts.push(`file (${s.contentMediaType})`);
  else if (s.type) parts.push(String(s.type));
  if (s.minimum !== undefined) parts.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined) parts.push(`≤ ${s.maximum}`);
  if (s.exclusiveMinimum !== undefined) parts.push(`> ${s.exclusiveMinimum}`);
  if (s.minLength !== undefined) parts.push(`length ≥ ${s.minLength}`);
  if (s.maxLength !== undefined) parts.push(`length ≤ ${s.maxLength}`);
  if (s.default !== undefined) parts.push(`default ${JSON.stringify(s.default)}`);
  return parts.join(", ");
}

/** What a wrong value of a form part gets (the part's `x-pd-rejected`). */
function rejection(p: Json): string {
  const r = p["x-pd-rejected"];
  if (!r) return "";
  const answer = `${r.status} ${r.code}`;
  if ("not" in p) return ` Sent at all: ${answer}.`;
  if (p.enum) return ` Other values: ${answer}.`;
  return ` Otherwise: ${answer}.`;
}

function Properties(props: { schema: Json }): Child {
  const s = props.schema;
  const entries = Object.entries((s.properties ?? {}) as Record<string, Json>);
  if (entries.length === 0) return <p>{s.type ? `A JSON ${s.type}.` : "Any content."}</p>;
  const required = new Set((s.required ?? []) as string[]);
  return (
    <table>
      <tr><th>Field</th><th>Type</th><th>Required</th><th>Description</th></tr>
      {entries.map(([name, p]) => (
        <tr>
          <td><code>{name}</code></td>
          <td>{typeText(p)}</td>
          <td>{required.has(name) ? "yes" : "no"}</td>
          <td>
            <Md text={p.description ?? ""} />
            {rejection(p)}
          </td>
        </tr>
      ))}
    </table>
  );
}

function Operation(props: { doc: OpenApiDocument; path: string; method: string; op: Json }): Child {
  const { doc, path, method, op } = props;
  const headers = (doc.components as Json).headers as Record<string, Json>;
  const params = (op.parameters ?? []) as Json[];
  const security = ((op.security ?? []) as Json[]).flatMap((s) => Object.keys(s));
  const responses = Object.entries(op.responses as Record<string, Json>);
  const success = responses.filter(([, r]) => !r.content?.["application/json"]?.examples);
  const errors = responses.filter(([, r]) => r.content?.["application/json"]?.examples);
  const body = op.requestBody ? Object.entries(op.requestBody.content as Record<string, Json>) : [];
  return (
    <section class="op" id={op.operationId}>
      <h3>
        <span class={`verb ${method}`}>{method}</span>
        <span class="path">{path}</span>
        {op["x-internal"] ? <span class="badge">internal</span> : ""}
      </h3>
      <p><strong>{op.summary}</strong></p>
      {op.description ? <p><Md text={op.description} /></p> : ""}
      <p>Authentication: {security.length ? security.map((s) => (s === "apiKey" ? "X-Api-Key header" : "Authorization: Bearer operator token")).join(", ") : "none"}</p>
      {params.length ? (
        <>
          <h4>Parameters</h4>
          <table>
            <tr><th>Name</th><th>In</th><th>Description</th></tr>
            {params.map((p) => (<tr><td><code>{p.name}</code></td><td>{p.in}</td><td>{p.description}</td></tr>))}
          </table>
        </>
      ) : ""}
      {body.map(([mediaType, media]) => {
        const schema = schemaOf(doc, media.schema);
        return (
          <>
            <h4>Request body: <code>{mediaType}</code></h4>
            {schema.description ? <p><Md text={schema.description} /></p> : ""}
            <Properties schema={schema} />
          </>
        );
      })}
      {success.map(([status, r]) => (
        <>
          <h4>{status}: {r.description}</h4>
          {r.content ? <p>Content: {Object.keys(r.content).map((m) => <code>{m} </code>)}</p> : ""}
          {r.headers && Object.keys(r.headers).length ? (
            <table>
              <tr><th>Header</th><th>Meaning</th></tr>
              {Object.entries(r.headers as Record<string, Json>).map(([name, h]) => (
                <tr><td><code>{name}</code></td><td><Md text={headers[refName(h) ?? ""]?.description} /></td></tr>
              ))}
            </table>
          ) : ""}
        </>
      ))}
      {errors.length ? (
        <>
          <h4>Errors</h4>
          <table>
            <tr><th>HTTP</th><th>code</th><th>When</th></tr>
            {errors.flatMap(([status, r]) =>
              Object.entries(r.content["application/json"].examples as Record<string, Json>).map(([code, ex]) => (
                <tr><td>{status}</td><td><code>{code}</code></td><td><Md text={ex.summary} /></td></tr>
              )),
            )}
          </table>
        </>
      ) : ""}
    </section>
  );
}

export function renderReferencePage(doc: OpenApiDocument): string {
  const info = doc.info as Json;
  const tags = (doc.tags ?? []) as { name: string; description: string }[];
  const ops = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
  const page = (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${info.title} ${info.version} reference`}</title>
        <style dangerouslySetInnerHTML={{ __html: CSS }} />
      </head>
      <body>
        <main>
          <h1>{info.title} <small>{info.version}</small></h1>
          <p><Md text={info.description} /></p>
          <p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI {doc.openapi}).</p>
          <nav>
            <ul>
              {ops.map(({ path, method, op }) => (
                <li><a href={`#${op.operationId}`}><code>{method.toUpperCase()} {path}</code></a></li>
              ))}
            </ul>
          </nav>
          {tags.map((t) => {
            const mine = ops.filter(({ op }) => (op.tags as string[])[0] === t.name);
            if (mine.length === 0) return "";
            return (
              <>
                <h2>{t.name}</h2>
                <p><Md text={t.description} /></p>
                {mine.map(({ path, method, op }) => <Operation doc={doc} path={path} method={method} op={op} />)}
              </>
            );
          })}
        </main>
      </body>
    </html>
  );
  return `<!doctype html>\n${page.toString()}`;
}
