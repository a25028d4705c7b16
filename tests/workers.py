"""``manage.py runworkers`` as a test starts it: a real process group on the test's database."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

from tests.conftest import PYTHON, ROOT, child_env


class Workers:
    """A ``runworkers`` process group; whatever the test does, nothing outlives it."""

    def __init__(self, log: Path, *args: str, **env: str) -> None:
        self.log = log
        self._out = log.open("wb")
        self.proc = subprocess.Popen(
            [PYTHON, "manage.py", "runworkers", *args], cwd=ROOT, env=child_env(JOBS_LOG_LEVEL="INFO", **env),
            stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def wait(self, timeout: float = 30) -> int:
        return self.proc.wait(timeout=timeout)

    def text(self) -> str:
        return self.log.read_text()

    def kill_all(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._out.close()


def children(pid: int) -> list[int]:
    """The supervisor's worker processes, as the kernel lists them."""
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def drain(**env: str) -> subprocess.CompletedProcess:
    """``runworkers --burst`` with one process: it serves every job waiting, then exits."""
    return subprocess.run(
        [PYTHON, "manage.py", "runworkers", "--processes", "1", "--burst", "--lease", "30"],
        cwd=ROOT, env=child_env(JOBS_LOG_LEVEL="INFO", **env), capture_output=True, text=True, timeout=180,
    )
