"""The fuzz run's settings, its per-case bounds, and the figures it reports.

Hypothesis profiles (``HYPOTHESIS_PROFILE`` selects one; ``ci`` by default):

- ``ci``: a fixed number of cases per format and endpoint, derandomized (the same cases on
  every run, so CI is deterministic), no example database; the whole of tests/fuzz stays
  under about a minute of CPU.
- ``fuzz-long``: thousands of random cases per test, for a longer run by hand:
  ``HYPOTHESIS_PROFILE=fuzz-long bin/test tests/fuzz``. Failures found are kept in
  ``var/hypothesis/`` and tried first on the next run.

Every case runs under ``measured``: CPU seconds (this process's and any child's it waited
for: the shared machine's wall time measures the neighbours, not the reader), the peak
resident memory it added (the kernel's high-water mark, reset before each case) and the
warnings it logged. The
figures (cases per format, outcomes, the slowest case, the peak memory, 500s) are printed
at the end of the run and written to ``artifacts/fuzz-figures.json``.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import resource
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from tests.parallel import report_section

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "artifacts" / "fuzz-figures.json"

_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
                 HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much]
# No "explain" phase: it traces every line of a failing case's replays, which multiplied the
# CPU they measured 10 to 60 times (a 0.4 s acceptance measured 25 s) and drowned the figures.
_PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
settings.register_profile("ci", max_examples=120, deadline=None, derandomize=True, database=None,
                          suppress_health_check=_SLOW_IS_FINE, print_blob=True, phases=_PHASES)
settings.register_profile("fuzz-long", max_examples=5_000, deadline=None, suppress_health_check=_SLOW_IS_FINE,
                          print_blob=True, database=DirectoryBasedExampleDatabase(ROOT / "var" / "hypothesis"),
                          phases=_PHASES)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# How many cases a test runs, as a multiple of the profile's max_examples (a cheap test may run more).
def examples(scale: float = 1.0) -> int:
    return max(1, int(settings.default.max_examples * scale))


# --- measuring one case ------------------------------------------------------------------

_CLEAR_REFS = Path("/proc/self/clear_refs")
_STATUS = Path("/proc/self/status")


def _cpu_seconds() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _status_kb(name: str) -> int | None:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(name + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark to the current RSS (Linux 4.0+); False where it cannot."""
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


@dataclass
class Cost:
    cpu_seconds: float = 0.0
    peak_mb: float = 0.0  # resident memory the case added at its peak, above where it started
    log_records: int = 0  # warnings and worse the case logged (pypdf's go to the process's stderr)


class _Counter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@contextmanager
def measured() -> Iterator[Cost]:
    """Measure the block's CPU seconds and the resident memory it added at its peak.

    With the kernel's high-water mark reset before the block, its peak after the block is
    the block's own; where the mark cannot be reset, ``ru_maxrss`` growth (a lower bound).
    """
    cost = Cost()
    # No cyclic collection inside the block: a full collection of the harness's own heap
    # (hypothesis keeps what it tried) would be charged to the case; a web or worker process
    # has no such heap. (A 0.15 s acceptance once measured 2.2 s in a long run and never
    # again: the likely cause.) The case's cyclic garbage is collected after it.
    collecting = gc.isenabled()
    gc.disable()
    counter = _Counter()
    logging.getLogger().addHandler(counter)
    exact = _reset_peak()
    start_rss = _status_kb("VmRSS") if exact else None
    start_max = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = _cpu_seconds()
    try:
        yield cost
    finally:
        cost.cpu_seconds = _cpu_seconds() - started
        logging.getLogger().removeHandler(counter)
        cost.log_records = counter.count
        if collecting:
            gc.enable()
        peak = _status_kb("VmHWM") if exact else None
        if peak is not None and start_rss is not None:
            cost.peak_mb = max(0, peak - start_rss) / 1024
        else:
            cost.peak_mb = max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start_max) / 1024


# --- the figures -------------------------------------------------------------------------


@dataclass
class Figures:
    """What the fuzz run tried and saw, per format (documents) and per endpoint (the API)."""

    cases: Counter = field(default_factory=Counter)
    outcomes: dict[str, Counter] = field(default_factory=dict)
    slowest: dict[str, dict[str, Any]] = field(default_factory=dict)  # phase -> the slowest case
    peak_mb: dict[str, dict[str, Any]] = field(default_factory=dict)  # phase -> the hungriest case
    most_logged: dict[str, dict[str, Any]] = field(default_factory=dict)  # phase -> the noisiest case
    statuses: dict[str, Counter] = field(default_factory=dict)
    server_errors: int = 0

    def case(self, what: str, outcome: str) -> None:
        self.cases[what] += 1
        self.outcomes.setdefault(what, Counter())[outcome] += 1

    def cost(self, phase: str, cost: Cost, describe: str) -> None:
        if cost.cpu_seconds > self.slowest.get(phase, {}).get("cpu_seconds", -1):
            self.slowest[phase] = {"cpu_seconds": round(cost.cpu_seconds, 4), "case": describe[:200]}
        if cost.peak_mb > self.peak_mb.get(phase, {}).get("mb", -1):
            self.peak_mb[phase] = {"mb": round(cost.peak_mb, 1), "case": describe[:200]}
        if cost.log_records > self.most_logged.get(phase, {}).get("records", -1):
            self.most_logged[phase] = {"records": cost.log_records, "case": describe[:200]}

    def status(self, endpoint: str, status: int, code: str = "") -> None:
        self.statuses.setdefault(endpoint, Counter())[f"{status} {code}".strip()] += 1
        self.cases[endpoint] += 1
        if status >= 500 and status != 503:
            self.server_errors += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": os.environ.get("HYPOTHESIS_PROFILE", "ci"),
            "cases": dict(sorted(self.cases.items())),
            "outcomes": {name: dict(counter.most_common()) for name, counter in sorted(self.outcomes.items())},
            "statuses": {name: dict(counter.most_common()) for name, counter in sorted(self.statuses.items())},
            "server_errors_500": self.server_errors,
            "slowest_case": self.slowest,
            "peak_memory": self.peak_mb,
            "most_log_records": self.most_logged,
        }


FIGURES_SEEN = Figures()


def pytest_sessionfinish(session, exitstatus):
    if not FIGURES_SEEN.cases:
        return
    data = FIGURES_SEEN.to_json()
    FIGURES.parent.mkdir(exist_ok=True)
    FIGURES.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    lines = [f"profile {data['profile']}; written to {FIGURES.relative_to(ROOT)}"]
    write = lines.append
    for name, count in data["cases"].items():
        detail = data["outcomes"].get(name) or data["statuses"].get(name) or {}
        top = ", ".join(f"{key} {value}" for key, value in list(detail.items())[:6])
        write(f"  {name:<22} {count:>6} cases   {top}")
    write(f"  500s: {data['server_errors_500']}")
    for phase, slow in data["slowest_case"].items():
        write(f"  slowest {phase:<12} {slow['cpu_seconds']:.3f} s CPU   {slow['case'][:90]}")
    for phase, peak in data["peak_memory"].items():
        write(f"  peak memory {phase:<8} {peak['mb']:.1f} MB   {peak['case'][:90]}")
    for phase, noisy in data["most_log_records"].items():
        write(f"  most logged {phase:<8} {noisy['records']} warnings   {noisy['case'][:90]}")
    report_section(session.config, "fuzz figures", lines)
