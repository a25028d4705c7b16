"""The product app stays the product: ``jobs`` imports neither the agent, the instruments nor the benchmarks."""

from __future__ import annotations

import ast

from django.core.management import get_commands

from tests.conftest import ROOT

OUTSIDE_THE_PRODUCT = {"agent", "ops", "bench"}


def imported_packages(path) -> set[str]:
    """Top-level packages a module imports, at module level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_no_module_under_jobs_imports_agent_ops_or_bench():
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & OUTSIDE_THE_PRODUCT)
        for path in sorted((ROOT / "jobs").rglob("*.py"))
        if imported_packages(path) & OUTSIDE_THE_PRODUCT
    }
    assert offenders == {}


def test_the_benchmark_commands_come_from_the_bench_app():
    commands = get_commands()
    assert commands["queuebench"] == "bench"
    assert commands["workerbench"] == "bench"
    assert not list((ROOT / "jobs").rglob("*bench*.py"))
