"""The stored documents against the job rows: a check, and a copy out and back in.

Wherever documents are kept (``documents.store``: files under MEDIA_ROOT, or an object
store every host reaches), the job table names them. ``check`` finds rows whose document is
not kept (a lost document: the job cannot be reviewed again, nor downloaded) and stored files
no row names (an upload whose request failed, files a restore brought back for jobs the
database copy does not have; retention sweeps them past its grace). ``copy_out`` copies every
stored file to a folder in MEDIA_ROOT's layout (a backup, made after the database's);
``copy_in`` puts a folder's files into the configured store, each written once (a restore, or
the move from one host's disk into an object store). One file is read whole at a time:
documents are bounded by their kind's size limit.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from documents import store as document_store
from documents.models import Document

from . import retention


@dataclass
class Check:
    missing: dict[str, list[int]] = field(default_factory=dict)  # document name: the jobs naming it
    unreferenced: list[str] = field(default_factory=list)  # stored files no job names
    stored: int = 0
    rows: int = 0


def check(*, batch: int = 500) -> Check:
    """Rows without their document, and stored files without a row (whatever their age)."""
    found = Check()
    kept = set()
    for name, _touched in document_store.stored_names():
        kept.add(name)
    found.stored = len(kept)
    rows = Document.objects.order_by("pk").values_list("pk", "name")
    last = 0
    while chunk := list(rows.filter(pk__gt=last)[:batch]):
        last = chunk[-1][0]
        found.rows += len(chunk)
        for pk, name in chunk:
            if name not in kept:
                found.missing.setdefault(name, []).append(pk)
    found.unreferenced = list(retention.stray_documents(batch=batch, grace=False))
    return found


@dataclass
class Copied:
    copied: int = 0
    present: int = 0  # already at the destination (written once: never overwritten)
    bytes: int = 0


def copy_out(folder: Path, *, say: Callable[[str], None] = lambda _: None) -> Copied:
    """Every stored file into ``folder`` (MEDIA_ROOT's layout); files already there are kept."""
    done = Copied()
    for name, _touched in document_store.stored_names():
        target = folder / name
        if not target.resolve().is_relative_to(folder.resolve()):
            raise ValueError(f"a stored name leaves the folder: {name!r}")
        if target.exists():
            done.present += 1
            continue
        content = document_store.read(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=target.parent, prefix=".copying-")
        with os.fdopen(fd, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, target)
        done.copied += 1
        done.bytes += len(content)
        say(name)
    return done


def copy_in(folder: Path, *, say: Callable[[str], None] = lambda _: None) -> Copied:
    """Every file under ``folder`` into the configured store, each only if it is not kept already.

    A page image set's manifest goes last, after its images, as when a worker keeps them."""
    done = Copied()
    for path in _files_manifests_last(folder):
        name = path.relative_to(folder).as_posix()
        content = path.read_bytes()
        if document_store.copy_in(name, content):
            done.copied += 1
            done.bytes += len(content)
            say(name)
        else:
            done.present += 1
    return done


def _files_manifests_last(folder: Path) -> Iterator[Path]:
    files = (p for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.startswith((".incoming", ".copying")))
    first, last = itertools.tee(files)
    yield from (p for p in first if p.name != document_store.PAGES_MANIFEST)
    yield from (p for p in last if p.name == document_store.PAGES_MANIFEST)
