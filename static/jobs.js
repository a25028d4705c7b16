// Docket's page behaviour. Loaded from a static file: the Content-Security-Policy allows no
// inline script, no on*= handlers and no eval. Every page works without it; this makes them
// kinder (times in the reader's zone, drag and drop, nothing lost on a refused form).

// --- Copy buttons: <button data-copy="#selector">. Delegated, so it works on htmx-swapped content.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  const source = document.querySelector(button.dataset.copy);
  if (!source) return;
  const text = source.innerText;
  try {
    await navigator.clipboard.writeText(text);
  } catch (err) {  // not a secure context, or no permission: select the text and copy it the old way
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    document.execCommand("copy");
  }
  const note = button.parentElement.querySelector("[data-copied]");
  if (note) note.hidden = false;
  announce("Copied.");
});

// --- The message to the supplier: <fieldset data-message-lines="#pre"> holds a box per request;
// an unticked one leaves its line out of the message the Copy button copies. Shown only with script.
function messageFrom(fieldset) {
  const target = document.querySelector(fieldset.dataset.messageLines);
  if (!target) return;
  const kept = [];
  fieldset.querySelectorAll("[data-message-line]").forEach((line) => {
    const box = line.querySelector("input[type=checkbox]");
    if (!box || box.checked) kept.push(line.dataset.messageLine);
  });
  target.textContent = kept.join("\n");
}
function armMessageLines(root) {
  root.querySelectorAll("[data-message-lines]").forEach((fieldset) => { fieldset.hidden = false; });
}
document.addEventListener("change", (event) => {
  const fieldset = event.target.closest("[data-message-lines]");
  if (fieldset) messageFrom(fieldset);
});
document.addEventListener("DOMContentLoaded", () => armMessageLines(document));
document.addEventListener("htmx:afterSwap", (event) => armMessageLines(event.target));

// --- Times: <time datetime="…Z" data-when> carries the UTC time as text; show it in the reader's
// zone, relative while recent ("3 min ago"), with the absolute local time on hover. The footer's
// [data-zone] says once which zone that is.
const ZONE = (() => {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (err) { return ""; }
})();
// Day, month in words, year: as the pages write every date ("13 November 2017"), in the reader's zone.
const ABSOLUTE = new Intl.DateTimeFormat("en-GB", {
  day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit",
});
const RELATIVE = typeof Intl.RelativeTimeFormat === "function"
  ? new Intl.RelativeTimeFormat(undefined, { numeric: "auto", style: "short" }) : null;

function relative(date) {
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  const away = Math.abs(seconds);
  if (!RELATIVE || away >= 7 * 86400) return ABSOLUTE.format(date);
  if (away < 45) return "just now";
  if (away < 3600) return RELATIVE.format(Math.round(seconds / 60), "minute");
  if (away < 86400) return RELATIVE.format(Math.round(seconds / 3600), "hour");
  return RELATIVE.format(Math.round(seconds / 86400), "day");
}

function showTimes(root) {
  root.querySelectorAll("time[data-when]").forEach((node) => {
    const date = new Date(node.getAttribute("datetime"));
    if (Number.isNaN(date.getTime())) return;
    node.textContent = relative(date);
    node.title = ABSOLUTE.format(date) + (ZONE ? ` (${ZONE})` : "");
  });
}

function showZone(root) {
  root.querySelectorAll("[data-zone]").forEach((node) => {
    node.textContent = ZONE ? `Times are in your time zone, ${ZONE.replaceAll("_", " ")}; hover over one for the exact time.`
      : "Times are in your time zone; hover over one for the exact time.";
  });
  root.querySelectorAll("input[data-tz]").forEach((input) => { if (!input.value && ZONE) input.value = ZONE; });
  // A link whose download is dated in the reader's zone (the CSV export) says which zone.
  root.querySelectorAll("a[data-tz-link]").forEach((link) => {
    const url = new URL(link.href, location.href);
    if (ZONE && !url.searchParams.has("tz")) { url.searchParams.set("tz", ZONE); link.href = url.pathname + url.search; }
  });
}

// --- Announcements: a polite live region (#announcer in _base.html) says what changed on its own,
// once: a swapped-in [data-announce] whose text differs from the one it replaced.
function announce(text) {
  const region = document.getElementById("announcer");
  if (!region || !text) return;
  region.textContent = "";
  setTimeout(() => { region.textContent = text; }, 50);
}

const lastAnnounced = new Map();
function rememberAnnouncements(root, speak) {
  root.querySelectorAll("[data-announce]").forEach((node) => {
    const key = node.id || "announce";
    const text = node.textContent.replace(/\s+/g, " ").trim();
    if (speak && lastAnnounced.has(key) && lastAnnounced.get(key) !== text) announce(text);
    lastAnnounced.set(key, text);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  showTimes(document);
  showZone(document);
  rememberAnnouncements(document, false);
  document.querySelectorAll("[data-dropzone]").forEach(setUpDropzone);
  document.querySelectorAll("[data-photos]").forEach(setUpPhotos);
  setInterval(() => showTimes(document), 30000);
});

document.addEventListener("htmx:load", (event) => {
  const root = event.detail.elt;
  showTimes(root);
  showZone(root);
  rememberAnnouncements(root, true);
  if (root.matches && root.matches("#submit-form")) restoreForm(root);
  root.querySelectorAll && root.querySelectorAll("[data-dropzone]").forEach(setUpDropzone);
  root.querySelectorAll && root.querySelectorAll("[data-photos]").forEach(setUpPhotos);
});

// --- Polls ([data-poll]) re-arm themselves by being swapped in again. A poll that fails (the job
// store briefly unavailable, another 5xx, the network away) is not swapped, so its one-shot "load"
// trigger would never fire again and the page would stop updating at a live state. Ask again
// after the server's Retry-After, or 10 s, bounded to 1..10 s.
document.addEventListener("htmx:afterRequest", (event) => {
  const elt = event.detail.elt;
  const status = event.detail.xhr ? event.detail.xhr.status : 0;
  if (event.detail.successful || !elt.matches("[data-poll]")) return;
  if (status !== 0 && status < 500) return;  // a 4xx will not get better by asking again
  const hinted = Number.parseInt((status && event.detail.xhr.getResponseHeader("Retry-After")) || "", 10);
  const seconds = Math.min(Math.max(Number.isNaN(hinted) ? 10 : hinted, 1), 10);
  setTimeout(() => { if (elt.isConnected) htmx.trigger(elt, "poll-retry"); }, seconds * 1000);
});

// --- The submit form. htmx leaves 4xx answers unswapped; the form's 400/409/413/415 answers are
// the form again with its errors, so swap those in. (Here rather than in an hx-on attribute: the
// Content-Security-Policy allows no inline handlers.)
const FORM_ERRORS = [400, 409, 413, 415];
document.addEventListener("htmx:beforeSwap", (event) => {
  if (!event.detail.elt.matches("#submit-form")) return;
  if (FORM_ERRORS.includes(event.detail.xhr.status)) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});

// --- Correcting a value on a job's page ([data-correction] forms swap the page's #status). A
// refused value (400) comes back as the page with the reason at its form: swap it in too. After
// the swap, focus goes to the field's row (or the refused form's input), not back to the top.
let correcting = null;
document.addEventListener("htmx:beforeRequest", (event) => {
  const form = event.detail.elt;
  if (form.matches && form.matches("[data-correction]")) correcting = form.closest("tr") ? form.closest("tr").id : null;
});
document.addEventListener("htmx:beforeSwap", (event) => {
  if (event.detail.elt.matches("[data-correction]") && event.detail.xhr.status === 400) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});
document.addEventListener("htmx:afterSettle", () => {
  if (!correcting) return;
  const row = document.getElementById(correcting);
  correcting = null;
  if (!row) return;
  const refused = row.querySelector("[aria-invalid=true]");
  (refused || row).focus();
});

// Nothing chosen or typed is lost on a refused submission: the files (which a server cannot send
// back) and the text go back into the form that replaces this one.
let sentForm = null;
document.addEventListener("htmx:beforeRequest", (event) => {
  const form = event.detail.elt;
  if (!form.matches || !form.matches("#submit-form")) return;
  sentForm = {
    files: Object.fromEntries([...form.querySelectorAll("input[type=file]")].map((i) => [i.name, i.files])),
    text: Object.fromEntries([...form.querySelectorAll("textarea")].map((t) => [t.name, t.value])),
  };
});

function restoreForm(form) {
  if (!sentForm) return;
  form.querySelectorAll("input[type=file]").forEach((input) => {
    const files = sentForm.files[input.name];
    if (!files || !files.length || input.files.length) return;
    try {
      input.files = files;
      input.dispatchEvent(new Event("change"));  // its list of what is chosen, again
    } catch (err) { /* an old browser: the files must be chosen again */ }
  });
  form.querySelectorAll("textarea").forEach((t) => {
    if (!t.value && sentForm.text[t.name]) t.value = sentForm.text[t.name];
  });
  sentForm = null;
  const summary = form.querySelector("#form-error");
  if (summary) summary.focus();
}

// Any other failure of the form (an expired CSRF token's 403, the job store unavailable, the network
// away) would leave the page silent: say what happened and that sending again is safe (the same
// form finds the jobs it already made).
document.addEventListener("htmx:afterRequest", (event) => {
  const form = event.detail.elt;
  if (event.detail.successful || !form.matches("#submit-form")) return;
  const status = event.detail.xhr ? event.detail.xhr.status : 0;
  if (FORM_ERRORS.includes(status)) return;
  let note = form.querySelector("[data-submit-failure]");
  if (!note) {
    note = document.createElement("p");
    note.className = "alert alert-bad";
    note.setAttribute("role", "alert");
    note.dataset.submitFailure = "";
    form.prepend(note);
  }
  note.textContent = status === 403
    ? "Your session has expired: reload the page and send the documents again."
    : status === 0
      ? "The site could not be reached. Nothing was lost: send again."
      : `The site could not accept this just now (HTTP ${status}). Sending again is safe: it will not make a second job.`;
});

// After Back, a page restored from the browser's cache may still show its button as busy.
window.addEventListener("pageshow", (event) => {
  if (!event.persisted) return;
  document.querySelectorAll("#submit-form button[type=submit]").forEach((b) => { b.disabled = false; });
});

// --- Choosing files: a list of what will be sent (with what will be refused, before sending),
// drag and drop onto the drop zone, and a Remove button per file.
function sizeWords(bytes) {  // as jobs.http.size_words says it: rounded up, one decimal below 10
  for (const [unit, scale] of [["MB", 1048576], ["KB", 1024]]) {
    if (bytes < scale) continue;
    const value = Math.ceil((bytes / scale) * 10) / 10;
    return `${value >= 10 || Number.isInteger(value) ? value.toFixed(0) : value.toFixed(1)} ${unit}`;
  }
  return `${bytes} bytes`;
}

function setUpDropzone(zone) {
  if (zone.dataset.ready) return;
  zone.dataset.ready = "1";
  const input = zone.querySelector("input[type=file]");
  if (!input) return;
  const list = zone.parentElement.querySelector("[data-chosen]");
  const accepted = (input.getAttribute("accept") || "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
  const maxBytes = Number(input.dataset.maxBytes || 0);
  const maxFiles = Number(input.dataset.maxFiles || 0);

  function render() {
    if (!list) return;
    list.replaceChildren();
    [...input.files].forEach((file, index) => {
      const item = document.createElement("li");
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = file.name;
      const size = document.createElement("span");
      size.className = "size";
      size.textContent = sizeWords(file.size);
      item.append(name, size);
      const extension = file.name.includes(".") ? `.${file.name.split(".").pop().toLowerCase()}` : "";
      let warning = "";
      if (maxBytes && file.size > maxBytes) warning = `This file is ${sizeWords(file.size)}; the limit is ${input.dataset.maxWords} per file.`;
      else if (accepted.length && !accepted.includes(extension)) warning = "This file is not a PDF, a Word document (.docx), a text file or an e-invoice (XML), nor a scan or photo (PNG, JPEG, TIFF).";
      if (warning) {
        const warn = document.createElement("span");
        warn.className = "warn";
        warn.textContent = warning + " It will be refused; the others will be sent.";
        item.append(warn);
      }
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "button-link";
      remove.textContent = "Remove";
      remove.setAttribute("aria-label", `Remove ${file.name}`);
      remove.addEventListener("click", () => { setFiles([...input.files].filter((_, i) => i !== index)); });
      item.append(remove);
      list.append(item);
    });
    if (maxFiles && input.files.length > maxFiles) {
      const item = document.createElement("li");
      item.className = "warn";
      item.textContent = `You chose ${input.files.length} files; at most ${maxFiles} can be sent at once.`;
      list.append(item);
    }
  }

  function setFiles(files) {
    const transfer = new DataTransfer();
    files.forEach((file) => transfer.items.add(file));
    input.files = transfer.files;
    render();
  }

  input.addEventListener("change", render);
  zone.addEventListener("dragover", (event) => { event.preventDefault(); zone.classList.add("dragging"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("dragging");
    if (event.dataTransfer && event.dataTransfer.files.length) setFiles([...input.files, ...event.dataTransfer.files]);
  });
  render();
}

// --- The camera ([data-photos]): each photo taken is a page of one document. A phone's camera
// hands over one photo at a time and the input would forget the last: the photos are kept, listed
// as pages in order, each with a Remove button.
function setUpPhotos(field) {
  if (field.dataset.ready) return;
  field.dataset.ready = "1";
  const input = field.querySelector("input[type=file]");
  const list = field.querySelector("[data-photo-list]");
  const label = field.querySelector("[data-photo-label]");
  if (!input || !list) return;
  const most = Number(input.dataset.maxPhotos || 0);
  let taken = [...input.files];

  function keep(photos) {
    taken = photos;
    const transfer = new DataTransfer();
    taken.forEach((photo) => transfer.items.add(photo));
    input.files = transfer.files;
    render();
  }

  function render() {
    list.replaceChildren();
    taken.forEach((photo, index) => {
      const item = document.createElement("li");
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = `Page ${index + 1}`;
      const size = document.createElement("span");
      size.className = "size";
      size.textContent = `${photo.name}, ${sizeWords(photo.size)}`;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "button-link";
      remove.textContent = "Remove";
      remove.setAttribute("aria-label", `Remove page ${index + 1}`);
      remove.addEventListener("click", () => keep(taken.filter((_, i) => i !== index)));
      item.append(name, size, remove);
      list.append(item);
    });
    if (most && taken.length > most) {
      const item = document.createElement("li");
      item.className = "warn";
      item.textContent = `You took ${taken.length} photos; at most ${most} pages make one document.`;
      list.append(item);
    }
    if (label) label.textContent = taken.length ? "Take a photo of the next page" : "Take a photo";
  }

  input.addEventListener("change", () => {
    const added = [...input.files].filter((photo) => !taken.includes(photo));
    try { keep([...taken, ...added]); } catch (err) { taken = [...input.files]; render(); }
  });
  render();
}

// --- The list's bulk bar ([data-bulk]): shown while rows are selected, with how many; without
// script it is always there. A selection's change is said in its polite live region
// ([data-bulk-said], there from the page's load, so screen readers hear the bar come and go).
function showBulk(announce) {
  document.querySelectorAll("[data-bulk]").forEach((bar) => {
    const chosen = document.querySelectorAll(`input[form="${bar.id}"]:checked`).length;
    bar.hidden = chosen === 0;
    const count = bar.querySelector("[data-bulk-count]");
    if (count) count.textContent = chosen ? `With the ${chosen} selected:` : "With the selected:";
    const said = document.querySelector(`[data-bulk-said="${bar.id}"]`);
    if (said && announce === true) {
      said.textContent = chosen
        ? `${chosen} selected. Their actions are at the foot of the window: ${bar.getAttribute("aria-label")}.`
        : "None selected.";
    }
  });
}
document.addEventListener("change", (event) => {
  if (event.target.matches && event.target.matches("[data-select-row]")) showBulk(true);
});
document.addEventListener("DOMContentLoaded", showBulk);
document.addEventListener("htmx:load", showBulk);

// --- Filters: <select data-autosubmit> submits its form on change; a filter form
// ([data-clean-query]) leaves empty fields out of the address, and the time zone too unless a day is chosen.
function cleanSubmit(form) {
  const params = new URLSearchParams();
  const data = new FormData(form);
  const hasDay = data.get("since") || data.get("until");
  for (const [name, value] of data.entries()) {
    if (value === "" || (name === "tz" && !hasDay)) continue;
    params.append(name, value);
  }
  const query = params.toString();
  window.location.assign(form.action + (query ? `?${query}` : ""));
}

document.addEventListener("change", (event) => {
  const select = event.target;
  if (!select.matches("select[data-autosubmit]") || !select.form) return;
  if (select.form.matches("[data-clean-query]")) cleanSubmit(select.form);
  else select.form.submit();
});

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!form.matches("form[data-clean-query]")) return;
  event.preventDefault();
  cleanSubmit(form);
});
