"""Which kinds take a document, how large, and how each checks one: registered per kind name by
the app that owns the kind, from its ``AppConfig.ready()``.

The queue's ``Kind`` knows nothing of documents. A kind with no rules here takes none: a document
sent to it is refused ("kind X takes no document"), as the kind's payload alone is its input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from jobs.registry import KindRegistry


class DocumentCheck(Protocol):
    def __call__(self, *, content: bytes, name: str, content_type: str) -> str:
        """Raise an AcceptanceError if the document is refused; return its media type."""


@dataclass(frozen=True)
class DocumentRules:
    """A kind's documents: at most ``max_bytes`` (0: no limit of its own), checked by ``check``
    (in a bounded child process, ``documents.store.bounded_check``) when it has one."""

    max_bytes: int = 0
    check: DocumentCheck | None = None


RULES: KindRegistry[DocumentRules | None] = KindRegistry("document rules", None)


def register(kind: str, rules: DocumentRules) -> DocumentRules:
    """The kind named ``kind`` takes documents under ``rules``."""
    RULES.register(kind, rules)
    return rules


def of(kind: str) -> DocumentRules | None:
    """The kind's document rules; None: it takes no document."""
    return RULES.of(kind)


def max_bytes(kind: str) -> int:
    """The largest document the kind takes (0: none, or no limit of its own)."""
    rules = of(kind)
    return rules.max_bytes if rules is not None else 0


def accepts_document(kind: str) -> bool:
    return of(kind) is not None
