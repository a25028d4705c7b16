"""The Content-Security-Policy refusals a page met, from its console and its DOM events."""

from __future__ import annotations

COLLECT = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(
    `${e.violatedDirective} refused ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`);
});
"""


def watch(page) -> list[str]:
    """Collect CSP refusals on ``page``: its console's and, per document, the DOM events'."""
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if "Content Security Policy" in m.text else None)
    page.add_init_script(COLLECT)
    return console


def refused(page, console: list[str]) -> list[str]:
    return console + page.evaluate("window.__cspViolations || []")
