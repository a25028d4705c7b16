"""Fixtures of the partition tests: one private site for the session, worker hosts per test.

The site (three host namespaces, a private PostgreSQL, the migrated schema, a member with
an API token, gunicorn) is made once: a cluster and a migration take several seconds. Each
test starts the workers it needs on the hosts it names, begins with an empty job table, and
leaves every link up and the database running, whatever happened in it.

Needs root. Without it the tests say so and skip; ``REQUIRE_PARTITION=1`` (as in CI) makes
that a failure.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.parallel import report_section

from . import harness
from .harness import Cluster, Network, Web, Workers

HOSTS = 3
FIGURES: dict[str, Any] = {}  # measured by the tests, printed at the end of the run
_keys = itertools.count(1)


@dataclass
class Site:
    network: Network
    cluster: Cluster
    web: Web
    env: dict[str, str]
    token: str
    workdir: Path
    started: list[Workers] = field(default_factory=list)

    def submit(self, kind: str = "diagnostic.sleep", payload: dict | None = None, key: str | None = None,
               ) -> tuple[int, dict[str, str], Any]:
        """POST /jobs as alice; returns status, headers and the JSON body."""
        return self.web.request("POST", "/jobs", self.token, body={"kind": kind, "payload": payload or {}},
                                headers={"Idempotency-Key": key or f"key-{next(_keys)}"})

    def accept(self, kind: str = "diagnostic.sleep", payload: dict | None = None) -> int:
        status, _, body = self.submit(kind, payload)
        assert status == 202, body
        return body["id"]

    def job(self, job_id: int) -> dict[str, Any]:
        rows = self.rows("SELECT j.*, d.name AS document__name, d.sha256 AS document__sha256 FROM jobs_job j "
                         "LEFT JOIN documents_document d ON d.job_id = j.id WHERE j.id = %s", (job_id,))
        assert rows, f"job {job_id} is not in the database"
        return rows[0]

    def events(self, job_id: int) -> list[dict[str, Any]]:
        return self.rows("SELECT * FROM jobs_jobevent WHERE job_id = %s ORDER BY id", (job_id,))

    def rows(self, query: str, params: tuple | list = ()) -> list[dict[str, Any]]:
        return self.cluster.rows(query, params)

    def listen_sessions(self, host: int | None = None) -> int:
        """Worker LISTEN sessions the server holds now (from host ``host`` only, if given)."""
        query = ("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = %s "
                 "AND query = 'LISTEN jobs_accepted' AND state = 'idle'")
        params: list[Any] = [harness.DBNAME]
        if host is not None:
            query += " AND client_addr = %s"
            params.append(self.network.inside(host))
        return self.rows(query, params)[0]["n"]


def _unavailable(reason: str):
    if os.environ.get("REQUIRE_PARTITION") == "1":
        pytest.fail(f"REQUIRE_PARTITION=1 but the partition tests cannot run: {reason}", pytrace=False)
    pytest.skip(f"SKIPPED partition tests: {reason}")


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(scope="session")
def partition_site():
    reason = harness.missing_requirements()
    if reason:
        _unavailable(reason)
    harness.reap_leftovers()
    workdir = Path(tempfile.mkdtemp(prefix=f"{harness.PREFIX}{os.getpid()}-site-"))
    with ExitStack() as stack:
        # A SIGTERM (a CI timeout, say) ends the run like Ctrl-C, so the teardown below still
        # stops the workers and the cluster and removes the namespaces.
        stack.callback(signal.signal, signal.SIGTERM, signal.signal(signal.SIGTERM, _interrupt))
        stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        network = Network(HOSTS)
        stack.callback(network.close)
        cluster = Cluster([network.outside(i) for i in range(HOSTS)])
        stack.callback(cluster.close)
        env = harness.site_env(workdir, cluster.url())
        harness.manage(env, "migrate", "--noinput")
        harness.manage(env, "createmember", "alice", "--tenant", "acme", "--password", "alice-" + os.urandom(8).hex())
        token = harness.manage(env, "createtoken", "alice").strip()
        web = Web(env, workdir)
        stack.callback(web.close)
        yield Site(network, cluster, web, env, token, workdir)


@pytest.fixture
def site(partition_site: Site):
    """The session's site with an empty job table and no webhook endpoint; links up and the
    database running after."""
    partition_site.cluster.sql("TRUNCATE jobs_job CASCADE")
    partition_site.cluster.sql("DELETE FROM agent_webhookendpoint")
    try:
        yield partition_site
    finally:
        for workers in partition_site.started:
            workers.stop()
        partition_site.started.clear()
        partition_site.network.heal_all()
        if not partition_site.cluster.running:
            partition_site.cluster.start()


@pytest.fixture
def hosts(site: Site) -> Callable[..., Workers]:
    """Start runworkers on host ``i`` (stopped when the test ends)."""

    def start(i: int, *, processes: int = 1, poll: float = harness.POLL, env: dict[str, str] | None = None,
              ) -> Workers:
        workers = harness.start_workers(site.network, i, site.cluster, site.env, site.workdir,
                                        processes=processes, poll=poll, extra_env=env)
        site.started.append(workers)
        return workers

    return start


@pytest.fixture
def webhooks(site: Site) -> Iterator[Callable[..., harness.WebhookSink]]:
    """Make alice's tenant a webhook endpoint with a receiver every host reaches (its
    ``script`` and ``delay``, tests/webhook_receiver.py); closed when the test ends."""
    made: list[harness.WebhookSink] = []

    def make(*script: int | str, delay: float = 0.0) -> harness.WebhookSink:
        made.append(harness.WebhookSink(site.network, site.cluster, "acme", *script, delay=delay))
        return made[-1]

    yield make
    for sink in made:
        sink.close()


def pytest_sessionfinish(session, exitstatus):
    if not FIGURES:
        return
    report_section(session.config, "partition figures", [f"{name}: {value}" for name, value in FIGURES.items()])
    artifacts = ROOT / "artifacts"
    if artifacts.is_dir():  # the figures of both units (tests/parallel.py), each written by its own process
        path = artifacts / "partition-figures.json"
        earlier = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**earlier, **FIGURES}, indent=2, default=str))
