"""How a handler's run ended, as small values the worker turns into one queue write.

``judge`` runs a handler and maps every way it can end to a verdict: its result, a failure
(retryable or not), a deferral, a cancellation it saw, or the discovery that this epoch no
longer owns the job. The
verdicts are plain frozen dataclasses, so a handler that ran in a child process
(``jobs.worker.sandbox``) sends its verdict back to the worker as it is.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .kinds import JobCancelled, JobDeferred, JobFailed
from .queue import FailureCode, StaleEpoch

if TYPE_CHECKING:
    from .context import JobContext


@dataclass(frozen=True)
class Completed:
    """``external``: the handler committed the external-start marker, so its completion is
    written at once rather than batched (the record of an outside effect must not wait)."""

    result: dict[str, Any]
    external: bool = False


@dataclass(frozen=True)
class Failed:
    """``error`` is what staff read in ``last_error``; ``code`` is kept beside it
    (``Job.failure_code``: the pages choose their words by it) and is what the logs count,
    with ``exception``, the class of an exception the handler did not catch, in its place."""

    error: str
    code: str
    retryable: bool = True
    exception: str = ""

    @property
    def logged(self) -> str:
        return self.exception or self.code


@dataclass(frozen=True)
class Deferred:
    """Hand the job back until ``until`` without spending the attempt (an outside service's 429)."""

    until: datetime
    reason: str


@dataclass(frozen=True)
class Cancelled:
    """The handler stopped because someone asked to cancel the job."""


@dataclass(frozen=True)
class Lost:
    """A fenced write inside the handler found that this epoch no longer owns the job."""

    reason: str


Verdict = Completed | Failed | Deferred | Cancelled | Lost


def failed(code: str, message: str, *, retryable: bool) -> Failed:
    return Failed(f"{code}: {message}", code, retryable)


OUT_OF_MEMORY = failed(FailureCode.MEMORY_LIMIT, "the job needed more memory than it is allowed",
                       retryable=False)
# How C libraries say an allocation failed when they raise their own error (zlib's "insufficient
# memory", the OS's "Cannot allocate memory", libpq's "out of memory").
_NO_MEMORY = re.compile(r"out of memory|insufficient memory|cannot allocate memory|memory allocation failed",
                        re.IGNORECASE)


def out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is a failed allocation wearing another exception: a MemoryError in its
    chain (a library that wraps what it caught), ``ENOMEM``, or a library's words for it."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, MemoryError):
            return True
        if isinstance(current, OSError) and current.errno == errno.ENOMEM:
            return True
        if _NO_MEMORY.search(str(current)[:500]):
            return True
        current = current.__cause__ or current.__context__
    return False


def judge(handler: Callable[[JobContext], Any], ctx: JobContext) -> Verdict:
    """Run the handler; turn how it ended into what to write."""
    try:
        result = handler(ctx)
    except JobFailed as exc:
        return failed(exc.code, exc.message, retryable=exc.retryable)
    except JobDeferred as exc:
        return Deferred(exc.until, exc.reason)
    except JobCancelled:
        return Cancelled()
    except StaleEpoch as exc:
        return Lost(exc.reason)
    except MemoryError:
        # Under an isolated kind's memory limit this is the input's doing: retrying it
        # would fail the same way.
        return OUT_OF_MEMORY
    except RecursionError:
        return failed(FailureCode.TOO_DEEP, "the input nests too deeply to be processed", retryable=False)
    except Exception as exc:  # noqa: BLE001  any other exception is a safe, retryable failure
        if out_of_memory(exc):
            return OUT_OF_MEMORY
        return Failed(f"{type(exc).__name__}: {exc}", FailureCode.HANDLER_ERROR, True, type(exc).__name__)
    if not isinstance(result, dict):
        return failed(FailureCode.BAD_RESULT, f"handler returned {type(result).__name__}, not a dict", retryable=False)
    return Completed(result, external=ctx.external_started)
