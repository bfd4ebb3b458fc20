// The playground page's script, served as /console/static/playground.js (the CSP
// allows scripts from this origin only). It uploads with XMLHttpRequest for upload
// progress, sends the CSRF token in the X-CSRF-Token header, shows the cut-out from an
// object URL and every refusal next to the drop zone with its code and request ID.
export const PLAYGROUND_JS = `
(() => {
  const form = document.getElementById("pg-form");
  if (!form) return;
  const $ = (id) => document.getElementById(id);
  const file = $("pg-file"), drop = $("pg-drop"), error = $("pg-error"), submit = $("pg-submit");
  const progress = $("pg-progress"), bar = $("pg-bar"), status = $("pg-status");
  const result = $("pg-result"), original = $("pg-original"), cutout = $("pg-cutout"), stage = $("pg-stage");
  const download = $("pg-download"), colour = $("pg-colour");
  const action = form.dataset.action, csrf = form.dataset.csrf, maxBytes = Number(form.dataset.maxBytes);
  let urls = [];
  let busy = false;

  const showError = (text) => {
    error.textContent = text;
    error.hidden = false;
    file.setAttribute("aria-invalid", "true");
  };
  const clearError = () => {
    error.hidden = true;
    error.textContent = "";
    file.removeAttribute("aria-invalid");
  };
  const done = () => {
    busy = false;
    submit.disabled = false;
    progress.hidden = true;
  };
  const withId = (text, id) => text + (id ? " Request ID: " + id + "." : "");

  async function refusal(xhr) {
    const id = xhr.getResponseHeader("x-pd-request-id");
    const type = xhr.getResponseHeader("content-type") || "";
    if (type.includes("application/json")) {
      try {
        const body = JSON.parse(await xhr.response.text());
        const e = body.errors[0];
        const wait = xhr.getResponseHeader("retry-after");
        return withId(e.title + " (" + xhr.status + " " + e.code + ")." + (wait ? " Try again in " + wait + " s." : ""), id);
      } catch {}
    }
    if (xhr.status === 404) return withId("This app was not found in your organization (404).", id);
    if (xhr.status === 403) return withId("The console refused the request (403): reload the page and try again.", id);
    return withId("Unexpected answer (HTTP " + xhr.status + "): reload the page and try again.", id);
  }

  function send(chosen) {
    if (busy || !chosen) return;
    clearError();
    if (chosen.size > maxBytes) {
      // Sending it would only be cut off at the limit; say so without uploading.
      showError("The file is " + chosen.size.toLocaleString("en-US") + " bytes; the limit is " + maxBytes.toLocaleString("en-US") +
        " bytes (413 file_too_large). Nothing was sent or counted: choose a smaller image.");
      return;
    }
    busy = true;
    submit.disabled = true;
    progress.hidden = false;
    bar.value = 0;
    status.textContent = "Uploading…";
    const body = new FormData();
    body.append("image_file", chosen, chosen.name || "image");
    body.append("size", "preview");
    const xhr = new XMLHttpRequest();
    xhr.open("POST", action);
    xhr.setRequestHeader("x-csrf-token", csrf);
    xhr.responseType = "blob";
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) bar.value = Math.round((e.loaded / e.total) * 100);
    };
    xhr.upload.onload = () => {
      bar.removeAttribute("value"); // indeterminate while the model works
      status.textContent = "Removing the background… this takes a few seconds.";
    };
    xhr.onerror = () => {
      done();
      showError("The connection failed before an answer came. Check your network and try again.");
    };
    xhr.onload = async () => {
      done();
      // Test-key answers carry the calls left, errors included: keep the intro's count true.
      const left = xhr.getResponseHeader("x-pd-test-remaining");
      if (left !== null) $("pg-left").textContent = left;
      // A session that ended is answered with a redirect to the sign-in page.
      if (xhr.responseURL && new URL(xhr.responseURL).pathname !== action) {
        showError("You are signed out. Sign in again, then come back to this page.");
        return;
      }
      const type = xhr.getResponseHeader("content-type") || "";
      if (xhr.status !== 200 || !type.startsWith("image/png")) {
        showError(await refusal(xhr));
        return;
      }
      for (const u of urls) URL.revokeObjectURL(u);
      urls = [URL.createObjectURL(chosen), URL.createObjectURL(xhr.response)];
      original.src = urls[0];
      cutout.src = urls[1];
      download.href = urls[1];
      download.download = (chosen.name || "image").replace(/\\.[^.]*$/, "") + "-cutout.png";
      $("pg-request-id").textContent = xhr.getResponseHeader("x-pd-request-id") || "";
      $("pg-size").textContent = xhr.getResponseHeader("x-width") + " × " + xhr.getResponseHeader("x-height") + " px (preview)";
      $("pg-ms").textContent = (xhr.getResponseHeader("x-processing-ms") || "?") + " ms";
      $("pg-remaining").textContent = xhr.getResponseHeader("x-pd-test-remaining") || "";
      result.hidden = false;
      status.textContent = "Done.";
      $("pg-result-h").focus();
    };
    xhr.send(body);
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!file.files[0]) showError("Choose an image first.");
    else send(file.files[0]);
  });
  file.addEventListener("change", () => send(file.files[0]));
  for (const type of ["dragenter", "dragover"]) {
    drop.addEventListener(type, (e) => { e.preventDefault(); drop.classList.add("over"); });
  }
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const f = e.dataTransfer && e.dataTransfer.files[0];
    if (f) send(f);
  });

  const paint = () => {
    const chosen = form.ownerDocument.querySelector('input[name="pg-bg"]:checked');
    const v = chosen ? chosen.value : "checker";
    stage.className = "stage " + (v === "colour" ? "" : v);
    // Set through the CSS object model: the CSP forbids inline style attributes, not this.
    stage.style.backgroundColor = v === "colour" ? colour.value : "";
  };
  document.addEventListener("change", (e) => {
    if (e.target.name === "pg-bg") paint();
  });
  colour.addEventListener("input", () => {
    document.querySelector('input[name="pg-bg"][value="colour"]').checked = true;
    paint();
  });
})();
`;
