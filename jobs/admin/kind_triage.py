"""What staff's job page asks of a job's kind, beyond the queue's own rows, registered by the app
that owns the kind.

Triage is the queue's (``jobs.admin``), but a kind knows things the queue does not: where a job
is in its own steps (its checkpoint), what it recorded of an outside call (for an ``unknown``
job), and what staff do about its own failure codes. An app registers a ``KindTriage`` for its
kind from ``AppConfig.ready()``; a kind that registers none gets the queue's lines alone
(``GenericTriage``). What a kind keeps it says with a capability flag, as Django's task
backends say ``supports_defer``, so the page branches on the flag, never on a missing hook.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol


class KindTriage(Protocol):
    supports_checkpoint: bool  # the kind keeps a checkpoint of its steps (``checkpoint``)
    supports_evidence: bool  # the kind records its outside calls (``evidence``)
    # What to do with a job that stopped on one of the kind's own failure codes (``JobFailed.code``),
    # by the job's state and then that code, in place of the queue's line for the state
    # (``jobs.admin.guidance``). The queue's own codes have theirs.
    guidance: Mapping[str, Mapping[str, str]]

    def checkpoint(self, job_id: int) -> dict[str, Any] | None:
        """The kind's own view of a job's progress, as staff are shown it (None: none yet)."""
        ...

    def evidence(self, job_id: int) -> list[tuple[str, str]]:
        """What the kind recorded of an ``unknown`` job's outside call, as (label, value) lines in
        words (the step, the idempotency key, the provider's request id), never the input's text."""
        ...


class GenericTriage:
    """A kind that registered nothing: no checkpoint, no record of outside calls, the queue's lines."""

    supports_checkpoint = False
    supports_evidence = False
    guidance: Mapping[str, Mapping[str, str]] = {}

    def checkpoint(self, job_id: int) -> dict[str, Any] | None:
        raise NotImplementedError("this kind keeps no checkpoint (supports_checkpoint)")

    def evidence(self, job_id: int) -> list[tuple[str, str]]:
        raise NotImplementedError("this kind records no outside calls (supports_evidence)")


GENERIC: KindTriage = GenericTriage()
_registry: dict[str, KindTriage] = {}


def register(kind: str, triage: KindTriage) -> KindTriage:
    """Triage the jobs of ``kind`` (a name in ``jobs.kinds``) with ``triage``; from ``AppConfig.ready()``."""
    if kind in _registry and _registry[kind] is not triage:
        raise ValueError(f"triage for job kind {kind!r} is already registered")
    _registry[kind] = triage
    return triage


@contextmanager
def registered(kind: str, triage: KindTriage) -> Iterator[KindTriage]:
    """``triage`` for ``kind`` for the duration of the block (tests), then what it had before."""
    previous = _registry.get(kind)
    _registry[kind] = triage
    try:
        yield triage
    finally:
        if previous is None:
            _registry.pop(kind, None)
        else:
            _registry[kind] = previous


def of(kind: str) -> KindTriage:
    """The triage registered for ``kind``; the generic one for a kind that registered none."""
    return _registry.get(kind, GENERIC)
