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
