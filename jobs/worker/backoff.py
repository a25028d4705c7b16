"""Waits that start small and double up to a cap: an idle worker's polls, a failed commit's retries."""

from __future__ import annotations


class IdleBackoff:
    """Exponential backoff: start small, double, stop at the cap."""

    def __init__(self, cap: float, start: float = 0.05) -> None:
        self.cap = cap
        self.start = min(start, cap)
        self._next = self.start

    def next_delay(self) -> float:
        delay = self._next
        self._next = min(self._next * 2, self.cap)
        return delay

    def reset(self) -> None:
        self._next = self.start
