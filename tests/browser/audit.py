"""Every user page, at 1280 px and at 390 px: a screenshot, no sideways scrolling, and axe-core.

``audit(page, name)`` screenshots the page as it is at both widths into ``artifacts/``,
checks that nothing scrolls sideways (``document.documentElement.scrollWidth <= innerWidth``)
and runs axe-core (vendored from npm in ``vendor/axe.min.js``, injected with Playwright's
``add_init_script``, which the page's Content-Security-Policy does not govern). Serious or
critical violations fail the test. Each result is also appended to ``artifacts/audit.json``,
so a run leaves a table of pages, widths and findings behind.
"""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

from .conftest import ARTIFACTS

AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
WIDTHS = {"1280": (1280, 900), "390": (390, 844)}
BLOCKING = ("serious", "critical")
REPORT = ARTIFACTS / "audit.json"

RUN_AXE = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                      nodes: v.nodes.slice(0, 3).map(n => n.target.join(" "))}));
}"""


def prepare(context) -> None:
    """Make axe-core available on every page of ``context`` (before the page's own scripts)."""
    context.add_init_script(path=str(AXE))


def overflow(page) -> dict[str, int]:
    return page.evaluate("({scroll: document.documentElement.scrollWidth, inner: window.innerWidth})")


def audit(page, name: str, *, record: bool = True, screenshots: bool = True) -> list[dict]:
    """Screenshot, overflow and axe at both widths; assert nothing blocking; return the findings."""
    ARTIFACTS.mkdir(exist_ok=True)
    original = page.viewport_size
    findings = []
    try:
        for label, (width, height) in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(150)  # let the layout settle at the new width
            widths = overflow(page)
            violations = page.evaluate(RUN_AXE)
            if screenshots:
                page.screenshot(path=str(ARTIFACTS / f"{name}-{label}.png"), full_page=True)
            blocking = [v for v in violations if v["impact"] in BLOCKING]
            findings.append({"page": name, "width": width, "scroll_width": widths["scroll"],
                             "overflow": widths["scroll"] > widths["inner"], "blocking": blocking,
                             "other": [f"{v['id']} ({v['impact']})" for v in violations if v not in blocking]})
    finally:
        if original:
            page.set_viewport_size(original)
    if record:
        _record(findings)
    problems = [f for f in findings if f["overflow"] or f["blocking"]]
    assert not problems, json.dumps(problems, indent=2)
    return findings


def _record(findings: list[dict]) -> None:
    # Test modules run in parallel processes: one at a time reads and rewrites the report.
    with open(ARTIFACTS / "audit.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        known = json.loads(REPORT.read_text()) if REPORT.exists() else []
        pages = {(f["page"], f["width"]) for f in findings}
        known = [f for f in known if (f["page"], f["width"]) not in pages] + findings
        REPORT.write_text(json.dumps(known, indent=2, ensure_ascii=False))
