// The console's one stylesheet and its one script (the key copy button), served as
// files so the Content-Security-Policy can forbid inline script and style.
export const STYLE_CSS = `
:root { --fg:#1b1f24; --muted:#57606a; --line:#d0d7de; --bg:#fff; --accent:#0b57d0; --err:#b3261e; --ok:#1a7f37; --warn:#9a6700; }
* { box-sizing: border-box; }
[hidden] { display:none !important; }
body { margin:0; font: 16px/1.5 system-ui, sans-serif; color:var(--fg); background:var(--bg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position:absolute; left:-999px; top:0; background:#fff; padding:.5rem; }
.skip:focus { left:.5rem; z-index:10; }
.top { display:flex; flex-wrap:wrap; gap:.5rem 1rem; align-items:center; padding:.75rem 1rem; border-bottom:1px solid var(--line); }
.brand { font-weight:700; text-decoration:none; color:var(--fg); }
nav ul { display:flex; flex-wrap:wrap; gap:.25rem .9rem; list-style:none; margin:0; padding:0; }
main { max-width: 64rem; margin: 0 auto; padding: 1rem; }
main:focus { outline: none; }
h1 { font-size: 1.5rem; margin-top: .5rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; }
form.inline { display:inline; }
.field { margin: .75rem 0; }
.field label { display:block; font-weight:600; }
input, select, button { font: inherit; }
input[type=text], input[type=email], input[type=search], input:not([type]), select { width: 100%; max-width: 24rem; padding:.45rem .5rem; border:1px solid var(--muted); border-radius:4px; }
.field.invalid input { border-color: var(--err); }
.error { color: var(--err); margin:.25rem 0 0; }
.hint { color: var(--muted); margin:.1rem 0 .25rem; font-size:.9rem; }
button, .button { display:inline-block; padding:.45rem .9rem; border:1px solid var(--accent); background:var(--accent); color:#fff; border-radius:4px; cursor:pointer; text-decoration:none; min-height:44px; }
button.secondary, .button.secondary { background:#fff; color:var(--accent); }
button.danger { background: var(--err); border-color: var(--err); }
button.link { background:none; border:none; color:var(--accent); text-decoration:underline; padding:0; min-height:auto; }
.notice { border-left: 4px solid var(--muted); padding:.5rem .75rem; margin: 1rem 0; background:#f6f8fa; }
.notice.ok { border-color: var(--ok); } .notice.warn { border-color: var(--warn); } .notice.error { border-color: var(--err); }
/* Wide content scrolls inside its own box (src/console/pages/scroll-region.tsx): a tab stop with the same focus ring. */
.scroll-region { overflow-x:auto; max-width:100%; }
table { border-collapse: collapse; width:100%; font-size:.92rem; }
th, td { text-align:left; padding:.35rem .5rem; border-bottom:1px solid var(--line); white-space:nowrap; }
code, .key { font-family: ui-monospace, monospace; word-break: break-all; }
.key { display:block; padding:.6rem; background:#f6f8fa; border:1px solid var(--line); border-radius:4px; white-space:normal; }
.cards { display:grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 1rem; }
.card { border:1px solid var(--line); border-radius:6px; padding: .75rem 1rem; }
.stat { font-size: 1.4rem; font-weight: 700; }
.state { display:inline-block; padding:0 .5rem; border-radius:999px; border:1px solid var(--line); font-size:.85rem; }
.actions { display:flex; flex-wrap:wrap; gap:.5rem; margin:.5rem 0; }
fieldset { border:1px solid var(--line); border-radius:6px; margin: 1rem 0; }
figure { margin: 1rem 0; }
.chart svg { width:100%; height:auto; max-width: 60rem; }
.legend { display:flex; flex-wrap:wrap; gap:.25rem 1rem; list-style:none; padding:0; }
.swatch { display:inline-block; width:.8rem; height:.8rem; margin-right:.3rem; vertical-align:middle; }
pre { background:#f6f8fa; padding:.75rem; border-radius:4px; }
@media (max-width: 480px) { main { padding:.75rem; } h1 { font-size:1.3rem; } pre { font-size:.85rem; } }
.checker { background-color:#fff; background-image: linear-gradient(45deg,#ccc 25%,transparent 25%,transparent 75%,#ccc 75%), linear-gradient(45deg,#ccc 25%,transparent 25%,transparent 75%,#ccc 75%); background-size:20px 20px; background-position:0 0,10px 10px; }
.stage.white { background:#fff; } .stage.black { background:#000; }
.stage { border:1px solid var(--line); border-radius:4px; line-height:0; }
.stage img, .showcase img { max-width:100%; height:auto; }
.compare .stage img { width:100%; }
.dropzone { border:2px dashed var(--muted); border-radius:6px; padding:1rem; margin:1rem 0; }
.dropzone.over { border-color:var(--accent); background:#eef4ff; }
.dropzone label { font-weight:600; display:block; }
.dropzone input[type=file] { max-width:100%; }
.progress { display:flex; flex-wrap:wrap; gap:.5rem; align-items:center; margin:.5rem 0; }
.compare { display:grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap:1rem; }
.compare figure { margin:0; }
.choice { display:inline-flex; align-items:center; gap:.3rem; margin:.25rem .9rem .25rem 0; min-height:44px; }
input[type=color] { min-height:44px; min-width:44px; }
.facts { display:grid; grid-template-columns:max-content 1fr; gap:.25rem 1rem; }
.facts dd { margin:0; }
.showcase .frame { position:relative; max-width:451px; }
.showcase:has(#see-original:checked) .cut-view, .showcase:has(#see-cutout:checked) .orig-view { display:none; }
.showcase figcaption, .licence { font-size:.85rem; color:var(--muted); }
.ways { display:grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap:1rem; }
.ways > * { min-width:0; }
`;

export const COPY_JS = `
document.addEventListener("click", async (e) => {
  const b = e.target.closest("button[data-copy]");
  if (!b) return;
  const text = document.getElementById(b.dataset.copy).textContent.trim();
  const status = document.getElementById(b.dataset.copy + "-status");
  try { await navigator.clipboard.writeText(text); status.textContent = "Copied."; }
  catch { status.textContent = "Copy failed: select the key and copy it by hand."; }
});
`;
