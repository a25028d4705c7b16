"""The suite in several processes (pytest-xdist, ``bin/test``'s ``--dist loadfile``).

Each test module runs whole in one process, as with xdist's own ``loadfile``, except that

- the modules of a unit in ``TOGETHER`` run in one process: the fuzz tests add their figures up
  in one place, and the partition tests of a unit share one private site (a PostgreSQL cluster
  and network namespaces, made once per process: tests/partition/conftest.py). The partition
  tests are two units, each with a site of its own, about two minutes each: one unit of four
  minutes was the PostgreSQL pass's longest chain;
- the units that take longest start first (``LONGEST_FIRST``, then the ones with the most
  tests), so that no long one starts last and keeps the whole run waiting on it alone.

Figures that a process measures reach the run's summary through ``report_section``: a
worker process hands them to the controlling one, which prints every section once.
"""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadFileScheduling

# A module's unit: the first prefix here that its path starts with (a unit is named by its prefix).
TOGETHER = {
    "tests/partition/test_cut.py": "tests/partition/ (cuts)",
    "tests/partition/test_web_cut.py": "tests/partition/ (cuts)",
    "tests/partition/": "tests/partition/ (crashes and the store)",
    "tests/fuzz/": "tests/fuzz/",
}
# The longest units, longest first, as ``--durations`` and the per-module times show them
# (docs/benchmarks.md, "The test suite's time").
LONGEST_FIRST = (
    "tests/partition/",
    "tests/browser/test_alices_pages.py",
    "tests/bench/test_benchmark.py",
    "tests/bench/test_workerbench.py",
    "tests/fuzz/",
    "tests/browser/test_watch_a_job.py",
    "tests/agent/test_real_invoices.py",
    "tests/mailin/test_imap.py",
    "tests/bench/test_loadbench.py",
    "tests/browser/test_list_fits.py",
    "tests/browser/test_suppliers.py",
    "tests/browser/test_verdict.py",
    "tests/jobs/test_runworkers.py",
    "tests/jobs/test_clock_skew.py",
    "tests/jobs/test_clock_first_reading.py",
    "tests/agent/test_hostile_workers.py",
    "tests/browser/test_evidence.py",
    "tests/jobs/test_stopped_process.py",
    "tests/jobs/test_kill.py",
    "tests/jobs/test_sharing.py",
    "tests/agent/test_ocr.py",
    "tests/browser/",
    "tests/tasks/test_benchmark.py",
    "tests/jobs/",
    "tests/agent/",
)

_SECTIONS = pytest.StashKey[list]()


class ModulesLongestFirst(LoadFileScheduling):
    """xdist's ``loadfile`` with folders kept together and the longest units first."""

    def _split_scope(self, nodeid: str) -> str:
        for prefix, unit in TOGETHER.items():
            if nodeid.startswith(prefix):
                return unit
        return super()._split_scope(nodeid)

    def _rank(self, scope: str) -> tuple[int, int]:
        known = next((i for i, prefix in enumerate(LONGEST_FIRST) if scope.startswith(prefix)), len(LONGEST_FIRST))
        return known, -len(self.workqueue[scope])

    def _assign_work_unit(self, node) -> None:
        self.workqueue.move_to_end(min(self.workqueue, key=self._rank), last=False)
        super()._assign_work_unit(node)


def report_section(config: pytest.Config, title: str, lines: list[str]) -> None:
    """Print ``lines`` under ``title`` in the run's summary; call it from ``pytest_sessionfinish``."""
    workeroutput = getattr(config, "workeroutput", None)  # set in an xdist worker process only
    if workeroutput is not None:
        workeroutput.setdefault("sections", []).append([title, lines])
    else:
        config.stash.setdefault(_SECTIONS, []).append([title, lines])


def received(config: pytest.Config, workeroutput: dict) -> None:
    """Keep the sections a worker process handed over when it finished."""
    config.stash.setdefault(_SECTIONS, []).extend(workeroutput.get("sections", []))


def print_sections(terminalreporter) -> None:
    for title, lines in terminalreporter.config.stash.get(_SECTIONS, []):
        terminalreporter.section(title)
        for line in lines:
            terminalreporter.write_line(line)
