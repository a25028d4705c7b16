"""What apps register for each job kind, with a default for a kind that registered nothing.

The queue's triage (``jobs.admin.kind_triage``) and the product's pages (``web.kind_pages``)
each ask a kind for its own answers; the app that owns the kind registers them from
``AppConfig.ready()``, once, and tests lend another for the length of a block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")


class KindRegistry(Generic[T]):
    """One answer of type ``T`` per job kind; ``default`` for a kind that registered none."""

    def __init__(self, what: str, default: T) -> None:
        self.what = what  # in words, for the error: "triage", "pages"
        self.default = default
        self._by_kind: dict[str, T] = {}
        self._later: dict[str, Callable[[], T]] = {}

    def register(self, kind: str, answer: T) -> T:
        """Answer for the jobs of ``kind`` (a name in ``jobs.kinds``) with ``answer``; a second,
        different answer for the same kind is refused."""
        if kind in self._by_kind and self._by_kind[kind] is not answer:
            raise ValueError(f"{self.what} for job kind {kind!r} already registered")
        self._by_kind[kind] = answer
        return answer

    def register_later(self, kind: str, load: Callable[[], T]) -> None:
        """Answer for ``kind`` with what ``load()`` returns, called at the first ``of(kind)``: an
        answer whose modules are costly to import is loaded by the process that first asks for
        it, not by every process that starts."""
        self._later[kind] = load

    @contextmanager
    def registered(self, kind: str, answer: T) -> Iterator[T]:
        """``answer`` for ``kind`` for the duration of the block (tests), then what it had before."""
        previous = self._by_kind.get(kind)
        self._by_kind[kind] = answer
        try:
            yield answer
        finally:
            if previous is None:
                self._by_kind.pop(kind, None)
            else:
                self._by_kind[kind] = previous

    def of(self, kind: str) -> T:
        """The answer registered for ``kind``, or the default."""
        if kind in self._later:
            self.register(kind, self._later.pop(kind)())
        return self._by_kind.get(kind, self.default)

    def kinds(self) -> list[str]:
        """The kinds that registered an answer (or will, on first use)."""
        return sorted({*self._by_kind, *self._later})


class SiteHook(Generic[T]):
    """One answer of type ``T`` for the whole site (what staff's pages show of a job's input, say);
    ``default`` until an app registers its own, once, from ``AppConfig.ready()``."""

    def __init__(self, what: str, default: T) -> None:
        self.what = what  # in words, for the error: "a job input"
        self.default = default
        self._answer: list[T] = []  # the one registered, if any

    def register(self, answer: T) -> T:
        """Answer with ``answer``; a second, different one is refused."""
        if self._answer and self._answer[0] is not answer:
            raise ValueError(f"{self.what} is already registered")
        self._answer[:] = [answer]
        return answer

    @contextmanager
    def registered(self, answer: T) -> Iterator[T]:
        """``answer`` for the duration of the block (tests), then what was registered before."""
        previous = list(self._answer)
        self._answer[:] = [answer]
        try:
            yield answer
        finally:
            self._answer[:] = previous

    def get(self) -> T:
        """The registered answer, or the default."""
        return self._answer[0] if self._answer else self.default
