"""Accepted documents: checked before anything is written, stored once per scope by SHA-256.

A stored document is never rewritten: its name is its scope and its digest, so the same
bytes from one scope map to the same file and a job's input cannot change after
acceptance. Each scope has its own files: whether another scope ever sent the same bytes
changes nothing a request can observe, not even how long acceptance takes.

A kind may keep images of a document's pages beside it (``<name>.pages/``: ``1.png``,
``2.png``... and a ``pages.json`` that lists them), made by its handler in the worker and
written once, all at a time: the folder appears whole by a rename, or not at all.

Where: the storage "documents" (``settings.STORAGES``). The filesystem (the default: files
under MEDIA_ROOT, for one host), or an S3-compatible object store every host reaches
(``documents.object_store``: the same names as keys; a page image set's manifest is put last,
only if absent, as the marker that makes the set visible). A store that cannot be reached
is ``StoreUnavailable``: acceptance answers 503 having committed nothing, a worker defers
the job (``documents.of_job``) without spending its attempt.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.files.storage import FileSystemStorage, storages

from jobs import bounded, kinds
from jobs.errors import PayloadTooLarge

from .errors import DocumentNotChecked, DocumentStoreUnavailable, DocumentTooComplex, UnsupportedDocument

if TYPE_CHECKING:
    from jobs.kinds import Kind

    from .object_store import DocumentStorage, Streamed
    from .rules import DocumentRules

log = logging.getLogger("documents.store")

# The bound on one document's structural check (``DocumentRules.check``), run in a child
# process forked for it (``jobs.bounded``): far below the web's request timeout (gunicorn's
# 30 s), so that three hostile uploads at once cannot hold the web's workers. The kinds'
# checks refuse what they know to be expensive before paying for it and take milliseconds
# for an ordinary document; this is for what they do not know.
CHECK_CPU_SECONDS = 2
CHECK_WALL_SECONDS = 3.0
CHECK_MEMORY_MB = 256
# Below this much of a batch's time left, a document is not even started.
MIN_CHECK_SECONDS = 0.25

# The monotonic time by which a check must end, when a batch of documents shares one budget.
_checks_end: contextvars.ContextVar[float | None] = contextvars.ContextVar("checks_end", default=None)


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


def check_and_store(upload: Upload, kind: Kind, rules: DocumentRules, *, scope_id: int) -> Stored:
    """Check ``upload`` by its kind's ``rules``, then keep it (once per scope and digest)."""
    limit = rules.max_bytes
    if limit and len(upload.content) > limit:
        raise PayloadTooLarge(f"the document is larger than {limit} bytes", field="document")
    if not upload.content:
        raise UnsupportedDocument("the document is empty", field="document")
    content_type = upload.content_type
    if rules.check is not None:
        content_type = bounded_check(upload, kind, rules)
    digest = hashlib.sha256(upload.content).hexdigest()
    name = f"{scope_id}/{digest[:2]}/{digest}"
    objects = object_storage()
    if objects is None:
        _write_once(path(name), upload.content)
    else:
        try:
            if not objects.put_once(name, upload.content):
                objects.touch(name)  # stored already: retention's grace starts again
        except StoreUnavailable:
            log.warning("document store unavailable: the upload was refused (%d bytes)", len(upload.content))
            raise DocumentStoreUnavailable("the document store is unavailable; nothing was accepted: send it again "
                                           "shortly", retry_after=STORE_RETRY_SECONDS) from None
    original = os.path.basename(upload.name or "document")[:255]
    return Stored(name, original, content_type, len(upload.content), digest)


@contextlib.contextmanager
def checks_end_by(deadline: float) -> Iterator[None]:
    """Checks started inside end by ``deadline`` (``time.monotonic()``): a batch's budget."""
    token = _checks_end.set(deadline)
    try:
        yield
    finally:
        _checks_end.reset(token)


def bounded_check(upload: Upload, kind: Kind, rules: DocumentRules) -> str:
    """``rules.check`` in a bounded child process; its media type, or a refusal.

    A check past its CPU, memory or wall-clock bound refuses the document as too complex
    (``too_complex``); one stopped only because its batch's time ran out refuses it as
    ``not_checked_in_time``, to be sent again on its own.
    """
    check_document = rules.check
    if check_document is None:
        raise TypeError("bounded_check is for a kind that checks its documents")
    wall, by_batch = CHECK_WALL_SECONDS, False
    deadline = _checks_end.get()
    if deadline is not None:
        left = deadline - time.monotonic()
        if left < MIN_CHECK_SECONDS:
            raise DocumentNotChecked(NOT_CHECKED, field="document")
        if left < wall:
            wall, by_batch = left, True

    kinds.warmed(kind)  # the readers loaded here, once, not in every check's child

    def check() -> str:
        return check_document(content=upload.content, name=upload.name, content_type=upload.content_type)

    try:
        media_type: str = bounded.run(check, cpu_seconds=CHECK_CPU_SECONDS, memory_mb=CHECK_MEMORY_MB, wall=wall)
    except bounded.ChildFailed as exc:  # killed by the kernel (out of memory), or a reader's crash
        log.warning("document check failed: %s (%d bytes)", exc, len(upload.content))
        raise DocumentTooComplex("the document could not be checked: reading its structure ended its process",
                                 field="document") from None
    except bounded.OverBound as over:
        log.warning("document check over its %s bound after %.2f s (%d bytes)", over.why, over.seconds,
                    len(upload.content))
        if over.why == "wall" and by_batch:
            raise DocumentNotChecked(NOT_CHECKED, field="document") from None
        raise DocumentTooComplex(f"the document is too complex to check: reading its structure takes more than "
                                 f"the {CHECK_CPU_SECONDS:g} s of processor time, {CHECK_WALL_SECONDS:g} s in all "
                                 f"or {CHECK_MEMORY_MB} MB a check may use", field="document") from None
    return media_type


NOT_CHECKED = "not checked in time: send it again on its own"


MAX_STORE_SECONDS = 300  # the most any of the store's timeouts may be
# How long a client waits before sending again a document the store could not take.
STORE_RETRY_SECONDS = 10


def retry_seconds() -> float:
    """How long a job waits, deferred, when the store cannot be reached (DOCUMENTS_RETRY_SECONDS)."""
    return float((getattr(settings, "DOCUMENTS", None) or {}).get("RETRY_SECONDS", STORE_RETRY_SECONDS))


class StoreUnavailable(Exception):
    """The object store could not be reached, or answered that it cannot serve now."""


def object_storage() -> DocumentStorage | None:
    """The object store documents are kept in, or None: they are files under MEDIA_ROOT (also when
    the project names no "documents" storage)."""
    if "documents" not in storages.backends:
        return None
    storage = storages["documents"]
    if isinstance(storage, FileSystemStorage):
        return None
    from .object_store import DocumentStorage

    if not isinstance(storage, DocumentStorage):
        raise ImproperlyConfigured("STORAGES['documents'] must be a FileSystemStorage or "
                                   "documents.object_store.DocumentStorage")
    return storage


def path(name: str) -> Path:
    return Path(settings.MEDIA_ROOT) / name


def read(name: str) -> bytes:
    """A stored document's bytes (FileNotFoundError when it is not kept; StoreUnavailable)."""
    objects = object_storage()
    return path(name).read_bytes() if objects is None else objects.read(name)


def stored_file(name: str) -> Path | None:
    """The stored file named ``name``, if it is still kept (and is under MEDIA_ROOT)."""
    if not name:
        return None
    root = path("").resolve()
    stored = path(name).resolve()
    return stored if stored.is_relative_to(root) and stored.is_file() else None


def open_document(name: str) -> tuple[IO[bytes] | Streamed, int] | None:
    """A stored document to read in pieces, and its size; None when it is not kept."""
    objects = object_storage()
    if objects is None:
        stored = stored_file(name)
        return (stored.open("rb"), stored.stat().st_size) if stored is not None else None
    streamed = objects.stream(name) if name else None
    return (streamed, streamed.size) if streamed is not None else None


def modified(name: str) -> float | None:
    """When a stored file was stored or last touched (seconds since the epoch); None if absent."""
    objects = object_storage()
    if objects is not None:
        return objects.modified(name)
    try:
        return path(name).stat().st_mtime
    except FileNotFoundError:
        return None


def stored_names() -> Iterator[tuple[str, float]]:
    """Every stored file (documents, page images, what a crash left), with its modified time."""
    objects = object_storage()
    if objects is not None:
        yield from objects.listing()
        return
    root = path("")
    if not root.is_dir():
        return
    for p in sorted(root.rglob("*")):
        with contextlib.suppress(FileNotFoundError):
            if p.is_file():
                yield p.relative_to(root).as_posix(), p.stat().st_mtime


def copy_in(name: str, content: bytes) -> bool:
    """Keep ``content`` as stored file ``name`` unless it is kept already (a restore); whether it was."""
    objects = object_storage()
    if objects is not None:
        return objects.put_once(name, content)
    target = path(name)
    if target.exists():
        return False
    _write_once(target, content)
    return True


def delete_file(name: str) -> None:
    """Delete one stored file (not its page images): what a sweep of strays removes."""
    objects = object_storage()
    if objects is None:
        path(name).unlink(missing_ok=True)
    else:
        objects.remove([name])


def check_settings() -> None:
    """Stop start-up with a sentence when ``settings.DOCUMENTS`` cannot work; contacts nothing."""
    documents = getattr(settings, "DOCUMENTS", None) or {"STORE": "filesystem"}
    store = documents.get("STORE", "filesystem")
    if store == "filesystem":
        return
    if store != "s3":
        raise ImproperlyConfigured(f"DOCUMENTS_STORE must be 'filesystem' or 's3', not {store!r}")
    try:
        import storages.backends.s3  # noqa: F401
    except ImportError:
        raise ImproperlyConfigured("DOCUMENTS_STORE=s3 needs django-storages and boto3: pip install '.[s3]'") from None
    bucket = documents.get("BUCKET", "")
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", bucket):
        raise ImproperlyConfigured(f"DOCUMENTS_S3_BUCKET must be a bucket name (3-63 of a-z, 0-9, '.', '-'), "
                                   f"not {bucket!r}")
    endpoint = documents.get("ENDPOINT", "")
    if endpoint and not re.fullmatch(r"https?://[^/\s]+/?", endpoint):
        raise ImproperlyConfigured(f"DOCUMENTS_S3_ENDPOINT must be an http(s) address without a path, like "
                                   f"https://s3.eu-west-1.amazonaws.com, not {endpoint!r}")
    if bool(documents.get("ACCESS_KEY")) != bool(documents.get("SECRET_KEY")):
        raise ImproperlyConfigured("DOCUMENTS_S3_ACCESS_KEY and DOCUMENTS_S3_SECRET_KEY go together: set both, "
                                   "or neither (boto3's own chain: the instance's role, ~/.aws)")
    if documents.get("ADDRESSING") not in ("path", "virtual", "auto"):
        raise ImproperlyConfigured(f"DOCUMENTS_S3_ADDRESSING must be path, virtual or auto, not "
                                   f"{documents.get('ADDRESSING')!r}")
    if documents.get("REGION") and not re.fullmatch(r"[a-z0-9-]{2,32}", documents["REGION"]):
        raise ImproperlyConfigured(f"DOCUMENTS_S3_REGION must be a region name like eu-west-1, not "
                                   f"{documents['REGION']!r}")
    encryption = documents.get("ENCRYPTION", "")
    if encryption not in ("", "AES256", "aws:kms", "aws:kms:dsse"):
        raise ImproperlyConfigured(f"DOCUMENTS_S3_ENCRYPTION must be empty, AES256, aws:kms or aws:kms:dsse, "
                                   f"not {encryption!r}")
    if documents.get("KMS_KEY_ID") and not encryption.startswith("aws:kms"):
        raise ImproperlyConfigured("DOCUMENTS_S3_KMS_KEY_ID needs DOCUMENTS_S3_ENCRYPTION=aws:kms")
    for key in ("CONNECT_TIMEOUT", "READ_TIMEOUT", "RETRY_SECONDS"):
        try:
            seconds = float(documents.get(key, 1))
        except (TypeError, ValueError):
            seconds = 0.0
        if not 0 < seconds <= MAX_STORE_SECONDS:
            variable = "DOCUMENTS_RETRY_SECONDS" if key == "RETRY_SECONDS" else f"DOCUMENTS_S3_{key}"
            raise ImproperlyConfigured(f"{variable} must be a number of seconds above 0 (at most 300), "
                                       f"not {documents.get(key)!r}")


# Media types a browser would run or render as a page of this site: a download is never one.
_ACTIVE_TYPES = re.compile(r"html|xhtml|svg|javascript|ecmascript|xslt|multipart", re.IGNORECASE)
_MEDIA_TYPE = re.compile(r"[a-z]+/[a-z0-9][a-z0-9.+-]*")


def download_type(media_type: str | None) -> str:
    """The stored media type for a download, or a neutral one when it is not plainly inert."""
    if not media_type or not _MEDIA_TYPE.fullmatch(media_type) or _ACTIVE_TYPES.search(media_type):
        return "application/octet-stream"
    return f"{media_type}; charset=utf-8" if media_type.startswith("text/") else media_type


def download_filename(original: str | None) -> str:
    """The name a download is saved under: the sent file's name without control characters or
    path separators (the header quotes it: ``filename*`` for non-ASCII)."""
    cleaned = "".join(c for c in (original or "") if c.isprintable() and c not in "/\\").strip(" .")
    return cleaned[:200] or "document"


# --- Page images ---------------------------------------------------------------------------

PAGES_SUFFIX = ".pages"
PAGES_MANIFEST = "pages.json"
PAGE_MEDIA_TYPE = "image/png"
MAX_PAGE_IMAGES = 100  # what a manifest may list, whatever wrote it


@dataclass(frozen=True)
class PageImage:
    """One kept page image: its number from 1 and its size in pixels."""

    number: int
    width: int
    height: int


def pages_dir(name: str) -> Path:
    return path(name + PAGES_SUFFIX)


def _manifest(name: str) -> list[PageImage]:
    """The kept pages' manifest; [] without one. Raises StoreUnavailable."""
    objects = object_storage()
    try:
        if objects is None:
            raw = (pages_dir(name) / PAGES_MANIFEST).read_bytes()
        else:
            raw = objects.read(f"{name}{PAGES_SUFFIX}/{PAGES_MANIFEST}")
        listed = json.loads(raw)["pages"][:MAX_PAGE_IMAGES]
        return [PageImage(number, int(page["width"]), int(page["height"])) for number, page in enumerate(listed, 1)]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def page_images(name: str) -> list[PageImage]:
    """The page images kept for a stored document, in order; none when none were made (or
    while the store cannot be reached: the page shows no preview, it does not fail)."""
    if not name:
        return []
    try:
        return _manifest(name)
    except StoreUnavailable:
        log.warning("document store unavailable: page images not listed")
        return []


def pages_kept(name: str) -> bool:
    """Whether page images of ``name`` are kept; StoreUnavailable when that cannot be known."""
    return bool(name) and bool(_manifest(name))


def page_image(name: str, number: int) -> Path | None:
    """The file of page ``number`` of a stored document, if it was kept (files under MEDIA_ROOT)."""
    if not 1 <= number <= len(page_images(name)):
        return None
    target = pages_dir(name) / f"{number}.png"
    return target if target.is_file() else None


def open_page_image(name: str, number: int) -> IO[bytes] | Streamed | None:
    """Page ``number`` of a stored document to read in pieces, if it was kept."""
    objects = object_storage()
    if objects is None:
        target = page_image(name, number)
        return target.open("rb") if target is not None else None
    if not 1 <= number <= len(page_images(name)):
        return None
    return objects.stream(f"{name}{PAGES_SUFFIX}/{number}.png")


def store_page_images(name: str, images: list[tuple[bytes, int, int]]) -> bool:
    """Keep ``images`` (PNG bytes, width, height) as the pages of stored document ``name``.

    Written once: to a temporary folder beside the document, each file synced, then renamed
    into place. False when the pages were already kept (another job of the same bytes).
    In an object store: the images, then the manifest put only if absent (the marker).
    """
    objects = object_storage()
    if objects is not None:
        return _put_page_images(objects, name, images)
    target = pages_dir(name)
    if target.exists() or not images:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    incoming = Path(tempfile.mkdtemp(dir=target.parent, prefix=".incoming-pages-"))
    try:
        for number, (content, _width, _height) in enumerate(images, 1):
            _write_synced(incoming / f"{number}.png", content)
        manifest = {"pages": [{"width": width, "height": height} for _content, width, height in images]}
        _write_synced(incoming / PAGES_MANIFEST, json.dumps(manifest).encode())
        try:
            os.rename(incoming, target)  # atomic; refuses a target that appeared meanwhile
        except OSError:
            return False
        return True
    finally:
        shutil.rmtree(incoming, ignore_errors=True)


def _put_page_images(objects: DocumentStorage, name: str, images: list[tuple[bytes, int, int]]) -> bool:
    folder = f"{name}{PAGES_SUFFIX}/"
    if not images or _manifest(name):
        return False
    for number, (content, _width, _height) in enumerate(images, 1):
        # A set a crash left without its manifest is invisible; its images are put again here.
        objects.put(f"{folder}{number}.png", content, content_type=PAGE_MEDIA_TYPE)
    manifest = {"pages": [{"width": width, "height": height} for _content, width, height in images]}
    return objects.put_once(folder + PAGES_MANIFEST, json.dumps(manifest).encode(), content_type="application/json")


def delete(name: str) -> None:
    """Delete a stored document and the page images kept beside it."""
    objects = object_storage()
    if objects is not None:
        # The manifest first: a set being deleted is invisible from the first request on.
        pages = [n for n, _ in objects.listing(name + PAGES_SUFFIX + "/")]
        manifest = [n for n in pages if n.endswith("/" + PAGES_MANIFEST)]
        if manifest:
            objects.remove(manifest)
        objects.remove([n for n in pages if n not in manifest] + [name])
        return
    path(name).unlink(missing_ok=True)
    shutil.rmtree(pages_dir(name), ignore_errors=True)


def owner(relative: str) -> str:
    """The stored document a file under MEDIA_ROOT belongs to: itself, or the one whose pages it is."""
    head, sep, _ = relative.partition(PAGES_SUFFIX + "/")
    return head if sep else relative


def _write_synced(target: Path, content: bytes) -> None:
    with open(target, "wb") as f:
        f.write(content)
        f.flush()
        os.fsync(f.fileno())


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
