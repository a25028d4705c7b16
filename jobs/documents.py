"""Accepted documents: checked before anything is written, stored once per tenant by SHA-256.

A stored document is never rewritten: its name is its tenant and its digest, so the same
bytes from one tenant map to the same file and a job's input cannot change after
acceptance. Each tenant has its own files: whether another tenant ever sent the same bytes
changes nothing a request can observe, not even how long acceptance takes.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from .errors import PayloadTooLarge, UnsupportedDocument


@dataclass(frozen=True)
class Upload:
    """A document as received: its bytes, the client's file name and media type."""

    content: bytes
    name: str
    content_type: str


@dataclass(frozen=True)
class Stored:
    name: str
    original_name: str
    content_type: str
    size: int
    sha256: str


def check_and_store(upload: Upload, spec, *, tenant_id: int) -> Stored:
    limit = spec.max_document_bytes
    if limit and len(upload.content) > limit:
        raise PayloadTooLarge(f"the document is larger than {limit} bytes", field="document")
    if not upload.content:
        raise UnsupportedDocument("the document is empty", field="document")
    content_type = upload.content_type
    if spec.check_document is not None:
        content_type = spec.check_document(content=upload.content, name=upload.name, content_type=upload.content_type)
    digest = hashlib.sha256(upload.content).hexdigest()
    name = f"{tenant_id}/{digest[:2]}/{digest}"
    _write_once(path(name), upload.content)
    original = os.path.basename(upload.name or "document")[:255]
    return Stored(name, original, content_type, len(upload.content), digest)


def path(name: str) -> Path:
    return Path(settings.MEDIA_ROOT) / name


def read(name: str) -> bytes:
    return path(name).read_bytes()


def _write_once(target: Path, content: bytes) -> None:
    """Write to a temporary file, fsync, then rename: never a half-written document.

    Bytes already stored are only touched: retention leaves recently touched files alone,
    so a document re-uploaded while its last old job is being pruned survives.
    """
    if target.exists():
        os.utime(target)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
