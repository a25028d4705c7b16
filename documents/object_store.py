"""Documents in an S3-compatible object store: the storage "documents" when DOCUMENTS_STORE=s3.

django-storages' S3 backend on boto3 (docs/decisions.md says why) gives the connection, the
bucket, the key prefix and the objects' parameters (server-side encryption); the writes that
must be conditional are made here on its client: a document is put with ``If-None-Match: *``
(written once, never rewritten), and a page image set is its images first, then its manifest,
put the same way, as the marker that makes the set visible: whole or not at all.

Every failure to reach the store (no connection, a timeout, the store's own 5xx) is
``StoreUnavailable``: acceptance answers 503 with nothing committed, a job is deferred
without spending its attempt. A missing object is ``FileNotFoundError``, as on a disk.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Iterator
from datetime import datetime
from http import HTTPStatus
from typing import Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from storages.backends.s3 import S3Storage
from storages.utils import clean_name

from .store import StoreUnavailable

ALL_FAILURES = (BotoCoreError, ClientError)
_MISSING = {"404", "NoSuchKey", "NotFound"}
_TAKEN = {"412", "PreconditionFailed"}
_BUSY = {"SlowDown", "RequestTimeout", "ServiceUnavailable", "InternalError"}
_live: weakref.WeakSet[DocumentStorage] = weakref.WeakSet()


class DocumentStorage(S3Storage):  # type: ignore[misc]  # django-storages has no type hints
    """django-storages' S3 backend with the client's timeouts and retries bounded: a cut-off
    store fails a call within seconds (``connect_timeout``, ``read_timeout``, two attempts),
    never hangs a web worker or outlasts a lease."""

    def get_default_settings(self) -> dict[str, Any]:
        defaults: dict[str, Any] = super().get_default_settings()
        return {**defaults, "connect_timeout": 3.0, "read_timeout": 10.0}

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.client_config = Config(
            s3={"addressing_style": self.addressing_style}, signature_version=self.signature_version,
            connect_timeout=float(self.connect_timeout), read_timeout=float(self.read_timeout),
            retries={"max_attempts": 2, "mode": "standard"},
        )
        _live.add(self)

    def forget_connections(self) -> None:
        """A forked child makes its own connections: sockets are never shared across processes."""
        self._connections = threading.local()
        self._bucket = None

    # --- What documents.store needs beyond the Storage API -------------------------------

    def key(self, name: str) -> str:
        return str(self._normalize_name(clean_name(name)))

    def _call(self, operation: str, **kwargs: Any) -> Any:
        client = self.connection.meta.client
        try:
            return getattr(client, operation)(Bucket=self.bucket_name, **kwargs)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
            if code in _MISSING or status == HTTPStatus.NOT_FOUND:
                raise FileNotFoundError(kwargs.get("Key", "")) from None
            if code in _TAKEN or status == HTTPStatus.PRECONDITION_FAILED:
                raise FileExistsError(kwargs.get("Key", "")) from None
            if status >= HTTPStatus.INTERNAL_SERVER_ERROR or code in _BUSY:
                raise StoreUnavailable(f"the document store answered {code or status}") from None
            raise
        except BotoCoreError as exc:
            raise StoreUnavailable(f"the document store cannot be reached: {type(exc).__name__}") from None

    def put_once(self, name: str, content: bytes, *, content_type: str = "application/octet-stream") -> bool:
        """Put ``content`` at ``name`` unless an object is there already; whether it was put."""
        try:
            self._call("put_object", Key=self.key(name), Body=content, IfNoneMatch="*", ContentType=content_type,
                       **self._parameters(name))
        except FileExistsError:
            return False
        return True

    def put(self, name: str, content: bytes, *, content_type: str) -> None:
        """Put ``content`` at ``name`` whatever is there (a page image, before its set's marker)."""
        self._call("put_object", Key=self.key(name), Body=content, ContentType=content_type, **self._parameters(name))

    def touch(self, name: str) -> None:
        """Make the object's last-modified time now (a copy onto itself): retention's grace."""
        key = self.key(name)
        self._call("copy_object", Key=key, CopySource={"Bucket": self.bucket_name, "Key": key},
                   MetadataDirective="REPLACE", **self._parameters(name))

    def modified(self, name: str) -> float | None:
        """The object's last-modified time (seconds since the epoch), None without one."""
        try:
            head = self._call("head_object", Key=self.key(name))
        except FileNotFoundError:
            return None
        stamp: datetime = head["LastModified"]
        return stamp.timestamp()

    def read(self, name: str) -> bytes:
        body = self._call("get_object", Key=self.key(name))["Body"]
        try:
            content: bytes = body.read()
        except ALL_FAILURES as exc:
            raise StoreUnavailable(f"the document store stopped answering: {type(exc).__name__}") from None
        finally:
            body.close()
        return content

    def stream(self, name: str) -> Streamed | None:
        """The object as a file to read in pieces (a download never holds it whole); None if absent."""
        try:
            got = self._call("get_object", Key=self.key(name))
        except FileNotFoundError:
            return None
        return Streamed(got["Body"], int(got["ContentLength"]))

    def remove(self, names: list[str]) -> None:
        for start in range(0, len(names), 1000):
            chunk = names[start:start + 1000]
            self._call("delete_objects", Delete={"Objects": [{"Key": self.key(n)} for n in chunk], "Quiet": True})

    def listing(self, prefix: str = "") -> Iterator[tuple[str, float]]:
        """(name, last-modified) of every object under ``prefix``, in key order."""
        root = self.location.strip("/") + "/" if self.location else ""
        token: dict[str, str] = {}
        while True:
            page = self._call("list_objects_v2", Prefix=root + prefix, **token)
            for item in page.get("Contents", []):
                yield item["Key"][len(root):], item["LastModified"].timestamp()
            if not page.get("IsTruncated"):
                return
            token = {"ContinuationToken": page["NextContinuationToken"]}

    def _parameters(self, name: str) -> dict[str, Any]:
        params: dict[str, Any] = dict(self.get_object_parameters(name))
        return {k: v for k, v in params.items() if k in ("ServerSideEncryption", "SSEKMSKeyId", "StorageClass")}


class Streamed:
    """An object's body, read in pieces by FileResponse; its size for Content-Length."""

    def __init__(self, body: Any, size: int) -> None:
        self.body = body
        self.size = size

    def read(self, amount: int = -1) -> bytes:
        try:
            data: bytes = self.body.read(None if amount < 0 else amount)
        except ALL_FAILURES as exc:
            raise StoreUnavailable(f"the document store stopped answering: {type(exc).__name__}") from None
        return data

    def close(self) -> None:
        self.body.close()

    def __enter__(self) -> Streamed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _after_fork() -> None:
    for storage in list(_live):
        storage.forget_connections()


os.register_at_fork(after_in_child=_after_fork)
