"""What staff's job page asks of a job's kind, beyond the queue's own rows, registered by the app
that owns the kind.

Triage is the queue's (``jobs.admin``), but a kind knows things the queue does not: where a job
is in its own steps (its checkpoint), what it recorded of an outside call (for an ``unknown``
job), and what staff do about its own failure codes. An app registers a ``KindTriage`` for its
kind from ``AppConfig.ready()``; a kind that registers none gets the queue's lines alone
(``GenericTriage``). What a kind keeps it says with a capability flag, as Django's task
backends say ``supports_defer``, so the page branches on the flag, never on a missing hook.

Three things the admin asks of the site, not of a kind: the input a job keeps beside its payload
(its name in the list and the search, its metadata, the other jobs of the same input, the
download: a ``JobInput``, registered by the app that keeps it), how that input is shown beside
the result (its pages, what the result points at on them), and where its submitters see the job.
Each is registered once for the site from ``AppConfig.ready()``; without them the list names no
input, the page offers no download and no pane (``NO_JOB_INPUT``, ``NO_DOCUMENT_PANE``) and names
no submitter's page, and the queue's templates and URLs name none of the product's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from django import forms
from django.db.models import CharField, Expression, Q, QuerySet, Value

from ..registry import KindRegistry, SiteHook

if TYPE_CHECKING:
    from django.utils.safestring import SafeString

    from ..models import Job


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
        words (the step, the idempotency key, the called service's request id), never the input's text."""
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
_triage = KindRegistry[KindTriage]("triage", GENERIC)
register = _triage.register
register_later = _triage.register_later
registered = _triage.registered
of = _triage.of


@dataclass(frozen=True)
class Opened:
    """A job's kept input (or a page image of it), open to be read in pieces."""

    file: Any  # a binary file: ``read(n)``, ``close()``
    size: int | None
    content_type: str
    filename: str = ""


class JobInput(Protocol):
    """The input a job keeps beside its payload, as staff's list and page show it; its content only
    to staff granted ``view_document`` (the admin checks, and logs each look)."""

    def name(self) -> Expression:
        """The input's name for each job of a query ("" without one): the list's column, sorted by it."""
        ...

    def search(self, term: str) -> Q | None:
        """Jobs whose input's name holds ``term`` (None: the input is not searched)."""
        ...

    def has(self, job: Job) -> bool:
        ...

    def summary(self, job: Job) -> str:
        """Its metadata as HTML (name, type, size, digest), never its content; "—" without one."""
        ...

    def same(self, job: Job) -> QuerySet[Job] | None:
        """The scope's other jobs of the same input, newest first (None: it has none)."""
        ...

    def open(self, job: Job) -> Opened | None:
        """The input to download, named and typed as it may be saved; None: not kept."""
        ...

    def open_page(self, job: Job, number: int) -> Opened | None:
        """Image ``number`` of its pages, if one is kept."""
        ...


class NoJobInput:
    """No app keeps an input beside the payload: jobs are their payload alone."""

    def name(self) -> Expression:
        return Value("", output_field=CharField())

    def search(self, term: str) -> Q | None:
        return None

    def has(self, job: Job) -> bool:
        return False

    def summary(self, job: Job) -> str:
        return "—"

    def same(self, job: Job) -> QuerySet[Job] | None:
        return None

    def open(self, job: Job) -> Opened | None:
        return None

    def open_page(self, job: Job, number: int) -> Opened | None:
        return None


NO_JOB_INPUT: JobInput = NoJobInput()
_job_input: SiteHook[JobInput] = SiteHook("a job input", NO_JOB_INPUT)


def register_job_input(job_input: JobInput) -> JobInput:
    """Show and find jobs by ``job_input`` on staff's list and pages; from ``AppConfig.ready()``, once a site."""
    return _job_input.register(job_input)


def job_input() -> JobInput:
    """The registered job input; ``NO_JOB_INPUT`` when none is."""
    return _job_input.get()


class DocumentPane(Protocol):
    shows_documents: bool  # the product shows a stored document on the job page (``render``)
    media: forms.Media  # its scripts and styles, added to the job page that shows it

    def render(self, job: Job, *, page_url: Callable[[int], str], download_url: str,
               requested: str | None) -> SafeString:
        """The pane of ``job`` as HTML, with the admin's own URLs for a page's image and the
        download; ``requested`` is the page asked for (``?page=``)."""
        ...


class NoDocumentPane:
    """No product registered a pane: staff granted ``view_document`` download the document."""

    shows_documents = False
    media = forms.Media()

    def render(self, job: Job, *, page_url: Callable[[int], str], download_url: str,
               requested: str | None) -> SafeString:
        raise NotImplementedError("no document pane is registered (shows_documents)")


NO_DOCUMENT_PANE: DocumentPane = NoDocumentPane()
_document_pane: SiteHook[DocumentPane] = SiteHook("a document pane", NO_DOCUMENT_PANE)


def register_document_pane(pane: DocumentPane) -> DocumentPane:
    """Show stored documents on staff's job page with ``pane``; from ``AppConfig.ready()``, once a site."""
    return _document_pane.register(pane)


def document_pane_registered(pane: DocumentPane) -> AbstractContextManager[DocumentPane]:
    """``pane`` for the duration of the block (tests), then what was registered before."""
    return _document_pane.registered(pane)


def document_pane() -> DocumentPane:
    """The registered document pane; ``NO_DOCUMENT_PANE`` when the product registered none."""
    return _document_pane.get()


# The product's job id -> its submitters' page (None: a site without such pages).
_submitter_page: SiteHook[Callable[[int], str] | None] = SiteHook("a submitter page", None)


def register_submitter_page(url_of: Callable[[int], str]) -> None:
    """Staff's job page names ``url_of(job_id)`` as the page its submitters see; once a site."""
    _submitter_page.register(url_of)


def submitter_page(job_id: int) -> str | None:
    """The address of the job's page for its submitters; None on a site without such pages."""
    url_of = _submitter_page.get()
    return url_of(job_id) if url_of is not None else None
