// The document beside its review ([data-document], jobs/job_detail.html#document): one page at a
// time. Without this script Previous/Next and the links to a box load the page again with ?page=N;
// with it they show the page in place, and a link to a box (a field's "read from page 2", or the
// page's own list) shows its page, scrolls to the box and marks it. Loaded from a static file: the
// Content-Security-Policy allows no inline script.
(() => {
  let remembered = null;  // the page shown, kept across the status poll's swaps

  function figures(pane) { return [...pane.querySelectorAll("[data-page]")]; }

  function showPage(pane, wanted) {
    const all = figures(pane);
    if (!all.length) return null;
    const number = Math.min(Math.max(wanted, 1), all.length);
    all.forEach((figure) => {
      const shown = Number(figure.dataset.page) === number;
      figure.hidden = !shown;
      if (shown) figure.querySelectorAll("img[loading=lazy]").forEach((img) => { img.loading = "eager"; });
    });
    pane.dataset.current = String(number);
    const label = pane.querySelector("[data-page-label]");
    if (label) label.textContent = `Page ${number} of ${all.length}`;
    pane.querySelectorAll("[data-page-step]").forEach((link) => {
      const target = number + Number(link.dataset.pageStep);
      link.hidden = target < 1 || target > all.length;
      link.setAttribute("href", `?page=${Math.min(Math.max(target, 1), all.length)}#document`);
    });
    remembered = number;
    return all[number - 1];
  }

  function showBox(id) {
    const box = document.getElementById(id);
    const figure = box && box.closest("[data-page]");
    const pane = figure && figure.closest("[data-document]");
    if (!pane) return false;
    showPage(pane, Number(figure.dataset.page));
    document.querySelectorAll(".box.current").forEach((other) => other.classList.remove("current"));
    box.classList.add("current");
    figure.focus({ preventScroll: true });
    box.scrollIntoView({ block: "center", inline: "nearest" });
    return true;
  }

  // The value a "read from page N" was tapped from, to go back to (on a phone the page is far below
  // the values): the row's id and the box, found again after a status poll replaced the part.
  let origin = null;

  function originLink() {
    if (!origin) return null;
    const row = document.getElementById(origin.row);
    return row && row.querySelector(`[data-show-box="${origin.box}"]`);
  }

  function offerBack(link) {
    const row = link.closest("[id^=field-], [id^=also-]");
    const bar = document.querySelector("[data-back-bar]");
    if (!row || !bar) return;
    origin = { row: row.id, box: link.dataset.showBox };
    const label = row.querySelector("th, dt");
    const back = bar.querySelector("[data-back-to-field]");
    back.textContent = label ? `Back to ${label.textContent.trim()}` : "Back to the value";
    back.setAttribute("href", `#${row.id}`);
    bar.hidden = false;
    history.pushState({ box: origin.box }, "", `#${origin.box}`);
  }

  function backToValue() {
    const link = originLink();
    origin = null;
    document.querySelectorAll("[data-back-bar]").forEach((bar) => { bar.hidden = true; });
    if (!link) return;
    link.scrollIntoView({ block: "center", inline: "nearest" });
    link.focus({ preventScroll: true });
  }

  window.addEventListener("popstate", (event) => {
    // After the browser has restored the scroll of the entry it returns to.
    if (origin && !(event.state && event.state.box)) requestAnimationFrame(backToValue);
  });

  document.addEventListener("click", (event) => {
    const back = event.target.closest("[data-back-to-field]");
    if (back) {
      event.preventDefault();
      if (history.state && history.state.box) history.back();  // the popstate goes back to the value
      else backToValue();
      return;
    }
    const link = event.target.closest("[data-show-box]");
    const known = link && document.getElementById(link.dataset.showBox);
    if (known && known.closest("[data-document]")) {
      event.preventDefault();
      // The entry left keeps the scroll at the value: Back (the phone's or ours) returns there.
      if (!link.closest("[data-document]")) offerBack(link);
      showBox(link.dataset.showBox);
      return;
    }
    const step = event.target.closest("[data-page-step]");
    const pane = step && step.closest("[data-document]");
    if (pane) {
      event.preventDefault();
      const figure = showPage(pane, Number(pane.dataset.current || 1) + Number(step.dataset.pageStep));
      if (figure) figure.focus({ preventScroll: true });
    }
  });

  function setUp(root, arriving) {
    const panes = root.matches && root.matches("[data-document]") ? [root]
      : [...(root.querySelectorAll ? root.querySelectorAll("[data-document]") : [])];
    panes.forEach((pane) => {
      if (remembered !== null) showPage(pane, remembered);
      else showPage(pane, Number(pane.dataset.current || 1));
      const bar = pane.querySelector("[data-back-bar]");
      if (bar && origin) bar.hidden = false;
    });
    // Arrived by a link to a box (?page=N#box-...): mark it as a click would.
    const hash = window.location.hash.slice(1);
    if (arriving && hash.startsWith("box-") && panes.length) showBox(hash);
  }

  document.addEventListener("DOMContentLoaded", () => setUp(document, true));
  document.addEventListener("htmx:load", (event) => setUp(event.detail.elt, false));
})();
