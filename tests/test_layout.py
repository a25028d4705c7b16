"""The tree says which folder is the queue and which the product, and these tests hold the line.

``jobs`` is the queue: a reusable Django app that knows no product. It imports neither the
product's web app (``web``), nor the document review (``agent``), the supplier register
(``suppliers``), inbound e-mail (``mailin``), the instruments (``ops``) or the benchmarks
(``bench``), and it says nothing of invoices, suppliers or reviews: a kind contributes its own
words (``web.kind_pages.KindPages.words``). ``web`` and ``agent`` may import ``jobs``. The review reads
the register; the register never imports the review.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from django.core.management import get_commands

from tests.conftest import ROOT

QUEUE = ROOT / "jobs"
OUTSIDE_THE_QUEUE = {"web", "agent", "suppliers", "mailin", "ops", "bench"}
# The product's words: none of them belongs in the queue's code, comments or templates
# ("preview" is no review: the match starts at a word).
PRODUCT_WORDS = re.compile(r"\b(invoice|supplier|review)", re.IGNORECASE)


def imported_packages(path: Path) -> set[str]:
    """Top-level packages a module imports, at module level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def queue_files(*patterns: str) -> list[Path]:
    return sorted(path for pattern in patterns for path in QUEUE.rglob(pattern))


def test_the_queue_imports_neither_the_product_nor_the_instruments():
    offenders = {}
    for path in queue_files("*.py"):
        name = str(path.relative_to(ROOT))
        outside = imported_packages(path) & OUTSIDE_THE_QUEUE
        if outside:
            offenders[name] = sorted(outside)
    assert offenders == {}


def test_the_register_never_imports_the_review():
    offenders = {str(path.relative_to(ROOT)): "agent" for path in sorted((ROOT / "suppliers").rglob("*.py"))
                 if "agent" in imported_packages(path)}
    assert offenders == {}


def test_the_queue_says_no_product_word():
    """Its modules (strings and comments alike) and any template it owns."""
    found = {}
    for path in queue_files("*.py", "*.html", "*.txt"):
        name = str(path.relative_to(ROOT))
        hits = [line.strip() for line in path.read_text().splitlines() if PRODUCT_WORDS.search(line)]
        if hits:
            found[name] = hits
    assert found == {}


def test_the_word_check_would_see_a_product_word():
    assert PRODUCT_WORDS.search("the Invoice number") and PRODUCT_WORDS.search("# reviewed twice")
    assert not PRODUCT_WORDS.search("page previews")


def test_a_kind_without_words_is_told_in_generic_ones():
    from web import kind_pages

    assert kind_pages.of("no.such.kind").words == kind_pages.Words() and kind_pages.Words().running == "Running"
    assert not [value for value in vars(kind_pages.Words()).values() if PRODUCT_WORDS.search(value)]


def test_the_product_apps_are_apart_from_the_queue():
    """The pages and the API are the web app's; the demo accounts are the product's too."""
    assert not (QUEUE / "views.py").exists() and not (QUEUE / "urls.py").exists()
    assert get_commands()["setupdemo"] == "web"
    assert get_commands()["runworkers"] == "jobs"


def test_the_benchmark_commands_come_from_the_bench_app():
    commands = get_commands()
    assert commands["queuebench"] == "bench"
    assert commands["workerbench"] == "bench"
    assert not list(QUEUE.rglob("*bench*.py"))
