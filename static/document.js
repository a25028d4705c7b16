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

  document.addEventListener("click", (event) => {
    const link = event.target.closest("[data-show-box]");
    if (link && showBox(link.dataset.showBox)) {
      event.preventDefault();
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
    });
    // Arrived by a link to a box (?page=N#box-...): mark it as a click would.
    const hash = window.location.hash.slice(1);
    if (arriving && hash.startsWith("box-") && panes.length) showBox(hash);
  }

  document.addEventListener("DOMContentLoaded", () => setUp(document, true));
  document.addEventListener("htmx:load", (event) => setUp(event.detail.elt, false));
})();
