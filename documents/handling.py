"""What a handler reads of its job's document, and the page images it keeps beside it.

A job's document is its ``Document`` row (read once per claim) and the stored bytes it names,
and only those: a handler reaches no other job's file. A store that cannot be reached hands the
job back, its attempt not spent (``JobContext.defer``): the store said nothing about the
document, and another host may reach it.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager

from jobs.context import JobContext

from . import store
from .models import Document

# Each claim's document row, read at its first use: the context's life is the claim's.
_rows: weakref.WeakKeyDictionary[JobContext, Document | None] = weakref.WeakKeyDictionary()


def of_job(ctx: JobContext) -> Document | None:
    """The running job's document row (name, original name, type, size, digest); None without one."""
    if ctx not in _rows:
        _rows[ctx] = Document.objects.filter(job_id=ctx.job_id).first()
    return _rows[ctx]


def read(ctx: JobContext) -> bytes:
    """The running job's own document, and only it."""
    with reachable(ctx):
        return store.read(_named(ctx))


def pages_kept(ctx: JobContext) -> bool:
    """Whether images of the job's document's pages are kept already (written once)."""
    document = of_job(ctx)
    with reachable(ctx):
        return store.pages_kept(document.name if document is not None else "")


def keep_pages(ctx: JobContext, images: list[tuple[bytes, int, int]]) -> bool:
    """Keep images (PNG bytes, width, height) of the job's document's pages beside it, once."""
    name = _named(ctx)
    with reachable(ctx):
        return store.store_page_images(name, images)


def _named(ctx: JobContext) -> str:
    document = of_job(ctx)
    if document is None:
        raise LookupError("this job has no document")
    return document.name


@contextmanager
def reachable(ctx: JobContext) -> Iterator[None]:
    """A store out of reach defers the job (``DOCUMENTS_RETRY_SECONDS``) without spending its attempt."""
    try:
        yield
    except store.StoreUnavailable as exc:
        raise ctx.defer(store.retry_seconds(), str(exc)) from None
