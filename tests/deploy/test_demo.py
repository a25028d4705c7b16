"""``bin/demo``'s usage: read before anything is installed, and it names every switch."""

from __future__ import annotations

import subprocess

from tests.conftest import ROOT

DEMO = ROOT / "bin" / "demo"


def run_demo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(DEMO), *args], cwd=ROOT, capture_output=True, text=True, timeout=30)


def test_help_prints_the_usage_and_starts_nothing():
    done = run_demo("--help")
    assert done.returncode == 0 and done.stderr == ""
    usage = done.stdout
    assert usage.startswith("Bring Docket up on SQLite") and "#" not in usage
    for switch in ("bin/demo --triage", "DEMO_TRIAGE=1", "ADDRESS=", "WORKERS=", "var/demo.log"):
        assert switch in usage
    assert "source" not in usage  # the header comment only, not the script below it


def test_an_unknown_argument_is_refused_with_the_usage():
    done = run_demo("--triag")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("bin/demo: unknown argument: --triag\n") and "bin/demo --triage" in done.stderr
