"""One run of a claimed job, as the worker reports it: which claim, and since when."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .. import queue


@dataclass(frozen=True)
class Run:
    """The claim a worker is running (or handing back) and when it took it up (monotonic):
    every line the worker logs about it carries ``fields`` and the milliseconds since."""

    claim: queue.Claim
    started: float = field(default_factory=time.monotonic)

    @property
    def fields(self) -> dict[str, object]:
        c = self.claim
        return dict(job=c.job_id, kind=c.kind, epoch=c.epoch, attempt=c.attempt)

    def ms(self) -> int:
        """Milliseconds since the run started (``duration_ms`` in the log)."""
        return round((time.monotonic() - self.started) * 1000)
