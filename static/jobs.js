// Copy buttons: <button data-copy="#selector">. Delegated, so it works on htmx-swapped content.
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
});

// Polls ([data-poll]) re-arm themselves by being swapped in again. A poll that fails (the job
// store briefly unavailable, another 5xx, the network away) is not swapped, so its one-shot "load"
// trigger would never fire again and the page would stop updating at a live state. Ask again
// after the server's Retry-After, or the longest poll delay (10 s), bounded to 1..10 s.
document.addEventListener("htmx:afterRequest", (event) => {
  const elt = event.detail.elt;
  const status = event.detail.xhr ? event.detail.xhr.status : 0;
  if (event.detail.successful || !elt.matches("[data-poll]")) return;
  if (status !== 0 && status < 500) return;  // a 4xx will not get better by asking again
  const hinted = Number.parseInt((status && event.detail.xhr.getResponseHeader("Retry-After")) || "", 10);
  const seconds = Math.min(Math.max(Number.isNaN(hinted) ? 10 : hinted, 1), 10);
  setTimeout(() => { if (elt.isConnected) htmx.trigger(elt, "poll-retry"); }, seconds * 1000);
});

// htmx leaves 4xx answers unswapped; the submit form's 400/409/413/415 answers are the form
// again with its error, so swap those in. (Here rather than in an hx-on attribute: the
// Content-Security-Policy allows no inline handlers.)
document.addEventListener("htmx:beforeSwap", (event) => {
  if (!event.detail.elt.matches("#submit-form")) return;
  if ([400, 409, 413, 415].includes(event.detail.xhr.status)) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});

// <select data-autosubmit>: choosing an option submits its form (the job list's state filter).
document.addEventListener("change", (event) => {
  if (event.target.matches("select[data-autosubmit]") && event.target.form) event.target.form.submit();
});

// The submit form swaps in its own 400/409/413/415 answers (the form with its error). Any other
// failure (an expired CSRF token's 403, the job store unavailable, the network away) would leave
// the page silent: say what happened and that submitting again is safe (the same operation key
// finds the same job).
document.addEventListener("htmx:afterRequest", (event) => {
  const form = event.detail.elt;
  if (event.detail.successful || !form.matches("#submit-form")) return;
  const status = event.detail.xhr ? event.detail.xhr.status : 0;
  if ([400, 409, 413, 415].includes(status)) return;
  let note = form.querySelector("[data-submit-failure]");
  if (!note) {
    note = document.createElement("p");
    note.className = "error";
    note.setAttribute("role", "alert");
    note.dataset.submitFailure = "";
    form.prepend(note);
  }
  note.textContent = status === 403
    ? "Your session has expired: reload the page and submit again."
    : status === 0
      ? "The site could not be reached. Nothing was lost: submit again."
      : `The site could not accept this just now (HTTP ${status}). Submitting again is safe: it will not make a second job.`;
});
