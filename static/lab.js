// Reveal the lease lab's timeline one row per click, so each step is read before the next
// one shows. Without script every row is shown.
(function () {
  const rows = Array.from(document.querySelectorAll("#steps tbody tr"));
  let shown = 1;
  const count = document.getElementById("step-count");
  function render() {
    rows.forEach((row, i) => { row.hidden = i >= shown; row.classList.toggle("current", i === shown - 1 && shown < rows.length); });
    count.textContent = `step ${shown} of ${rows.length}`;
  }
  document.getElementById("step-next").addEventListener("click", () => { shown = Math.min(shown + 1, rows.length); render(); });
  document.getElementById("step-all").addEventListener("click", () => { shown = rows.length; render(); });
  render();
})();
