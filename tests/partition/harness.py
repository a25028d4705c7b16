"""Worker "hosts" in network namespaces, a private PostgreSQL, and the site under gunicorn.

The pieces the partition tests put together, each owning what it starts and taking it down
again in ``close()``:

- ``Network``: one network namespace per host, joined to the host side by a veth pair on a
  private /30 (``10.a.b.4i+1`` outside, ``10.a.b.4i+2`` inside). ``cut(i)`` takes the
  host-side end of the link down: the host's packets are dropped silently, as on a real
  partition (no reset, no "unreachable" at once), so its connections fail only through
  the timeouts the settings configure. ``heal(i)`` brings the link back. One more address
  of the host side, ``service`` (on its loopback, routed from every namespace over its own
  link), is where every host reaches what the tests serve them, the webhook receiver: a
  cut host loses it, the others keep it.
- ``Cluster``: a PostgreSQL cluster of Debian's binaries (initdb, pg_ctl, run as the
  ``postgres`` user), its data in a temporary folder, listening on the host-side
  addresses of the links and on a unix socket in that folder, on a free port. ``crash()``
  is ``pg_ctl stop -m immediate`` (no checkpoint, crash recovery at the next start).
- ``Workers``: ``manage.py runworkers`` inside one host's namespace (and its own UTS
  namespace, so the workers' names say which host they run on), logging JSON lines to a
  file the tests read.
- ``Web``: gunicorn serving the site from the host side, over the unix socket.
- ``WebhookSink``: a tenant's webhook endpoint whose receiver listens on ``service``, and
  the checks of what it received against the delivery jobs.
- ``WebHost``: the deploy recipe (nginx in front of gunicorn, deploy/) inside one host's
  namespace, reaching the database over the host's link; its clients connect to that
  host's own loopback (``in_namespace``), so a cut separates the web from the database only.

Only the test's own namespaces' addresses, loopback and the one address added to it are used. Every wait is bounded.
Nothing here touches the shared PostgreSQL server on port 5432.
"""

from __future__ import annotations

import contextlib
import ctypes
import http.client
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row

from tests.conftest import PYTHON, ROOT
from tests.webhook_receiver import Receiver, signature_ok

PG_BIN = Path("/usr/lib/postgresql/15/bin")
PREFIX = "jpt"  # names of namespaces, links and folders made here: jpt<pid>...
LEASE = 3.0  # seconds: short, so a partition plays out in a few seconds
POLL = 1.0  # the workers' idle poll cap, seconds
DBNAME = "site"


def missing_requirements() -> str | None:
    """Why the partition tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "they need root (network namespaces, veth links, running PostgreSQL as postgres)"
    for tool in ("ip", "runuser", "unshare"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    for tool in ("initdb", "pg_ctl", "postgres"):
        if not (PG_BIN / tool).exists():
            return f"{PG_BIN / tool} is missing (apt-get install postgresql-15)"
    probe = f"{PREFIX}{os.getpid()}probe"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, timeout=10)
    if made.returncode != 0:
        return f"network namespaces cannot be made here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=10)
    return None


def sh(*args: str, timeout: float = 30, check: bool = True, **kwargs: Any) -> subprocess.CompletedProcess:
    done = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited with {done.returncode}: {done.stderr.strip()}")
    return done


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, every: float = 0.05) -> Any:
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= end:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(every)


def utcnow() -> datetime:
    return datetime.now(UTC)


def reap_leftovers() -> None:
    """Remove what an earlier run killed outright (SIGKILL, a crash) left behind: the
    processes in its namespaces, the namespaces (their links go with them), its PostgreSQL
    and its gunicorn, found by the dead pid in their names. Live runs' are never touched."""
    listed = sh("ip", "netns", "list", check=False).stdout
    for name, pid in re.findall(rf"^({PREFIX}(\d+)-\d+)", listed, re.M):
        if not _alive(int(pid)):
            for stray in sh("ip", "netns", "pids", name, check=False).stdout.split():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(stray), signal.SIGKILL)
            sh("ip", "netns", "del", name, check=False)
    served = sh("ip", "-4", "addr", "show", "dev", "lo").stdout
    for address, pid in re.findall(rf"inet (\S+) .* lo:{PREFIX}(\d+)$", served, re.M):
        if not _alive(int(pid)):
            sh("ip", "addr", "del", address, "dev", "lo", check=False)
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*-*-*"):
        match = re.match(rf"{PREFIX}(\d+)-(pg|site)-", folder.name)
        if match and not _alive(int(match.group(1))):
            pidfile = folder / "data" / "postmaster.pid"
            if pidfile.exists():
                _kill_postmaster(pidfile)
            for web in folder.glob("*.gunicorn.pid"):
                _kill_named(web, "gunicorn")
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_postmaster(pidfile: Path) -> None:
    _kill_named(pidfile, "postgres", signal.SIGQUIT)  # immediate shutdown


def _kill_named(pidfile: Path, name: str, signum: int = signal.SIGTERM) -> None:
    """Signal the process a pid file names, if it is still the program it should be."""
    try:
        pid = int(pidfile.read_text().split()[0])
        if name.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
            os.kill(pid, signum)
    except (OSError, ValueError, IndexError):
        pass


# --- The network ---------------------------------------------------------------------------


class Network:
    """``hosts`` namespaces, each with a veth link to the host side."""

    def __init__(self, hosts: int) -> None:
        self.tag = f"{PREFIX}{os.getpid()}"
        self.hosts = hosts
        self.subnet = _free_subnet()
        self.service = str(self.subnet[254])
        self.made: list[str] = []
        self.serving = False
        try:
            sh("ip", "addr", "add", f"{self.service}/32", "dev", "lo", "label", f"lo:{self.tag}")
            self.serving = True
            for i in range(hosts):
                self._make(i)
        except BaseException:
            self.close()
            raise

    def namespace(self, i: int) -> str:
        return f"{self.tag}-{i}"

    def outside(self, i: int) -> str:
        """The host-side address of host ``i``'s link: where its workers reach the database."""
        return str(self.subnet[4 * i + 1])

    def inside(self, i: int) -> str:
        return str(self.subnet[4 * i + 2])

    def link(self, i: int) -> str:
        return f"{self.tag}h{i}"

    def _make(self, i: int) -> None:
        ns, outer, inner = self.namespace(i), self.link(i), f"{self.tag}n{i}"
        sh("ip", "netns", "add", ns)
        self.made.append(ns)
        sh("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
        sh("ip", "link", "set", inner, "netns", ns)
        sh("ip", "addr", "add", f"{self.outside(i)}/30", "dev", outer)
        sh("ip", "link", "set", outer, "up")
        inns = ("ip", "netns", "exec", ns)
        sh(*inns, "ip", "addr", "add", f"{self.inside(i)}/30", "dev", inner)
        sh(*inns, "ip", "link", "set", inner, "up")
        sh(*inns, "ip", "link", "set", "lo", "up")
        sh(*inns, "ip", "route", "add", f"{self.service}/32", "via", self.outside(i))

    def cut(self, i: int) -> datetime:
        """Take host ``i``'s link down; return when."""
        sh("ip", "link", "set", self.link(i), "down")
        return utcnow()

    def heal(self, i: int) -> datetime:
        sh("ip", "link", "set", self.link(i), "up")
        healed = utcnow()
        wait_until(lambda: "LOWER_UP" in sh("ip", "link", "show", self.link(i)).stdout, 10, f"link {i} up")
        return healed

    def heal_all(self) -> None:
        for i in range(self.hosts):
            sh("ip", "link", "set", self.link(i), "up", check=False)

    def exec_prefix(self, i: int) -> list[str]:
        return ["ip", "netns", "exec", self.namespace(i)]

    def close(self) -> None:
        for ns in reversed(self.made):  # deleting a namespace deletes the links in it
            sh("ip", "netns", "del", ns, check=False)
        for i in range(self.hosts):
            if Path(f"/sys/class/net/{self.link(i)}").exists():
                sh("ip", "link", "del", self.link(i), check=False)
        self.made.clear()
        if self.serving:
            sh("ip", "addr", "del", f"{self.service}/32", "dev", "lo", check=False)
            self.serving = False


def _free_subnet() -> ipaddress.IPv4Network:
    """A /24 in 10.200.0.0/13 that no address or route on this machine overlaps."""
    used = sh("ip", "-4", "route", "show", "table", "all").stdout + sh("ip", "-4", "addr").stdout
    taken = [ipaddress.ip_network(m, strict=False) for m in re.findall(r"(\d+\.\d+\.\d+\.\d+(?:/\d+)?)", used)]
    rng = int.from_bytes(os.urandom(2), "big")
    for step in range(2048):
        candidate = ipaddress.ip_network(f"10.{200 + (rng + step) % 8}.{(rng + step) // 8 % 256}.0/24")
        if not any(candidate.overlaps(net) for net in taken):
            return candidate
    raise RuntimeError("no free 10.200.0.0/13 subnet for the test links")


# --- PostgreSQL ---------------------------------------------------------------------------------


class Cluster:
    """A private PostgreSQL 15 cluster, run as the postgres user from a temporary folder."""

    def __init__(self, listen: list[str]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self.port = _free_port()
        self.listen = listen
        shutil.chown(self.dir, "postgres", "postgres")
        try:
            self._pg("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                     "--no-sync", "--no-instructions", timeout=120)
            self._configure()
            self.start()
            self.sql(f"CREATE DATABASE {DBNAME}", dbname="postgres")
        except BaseException:
            self.close()
            raise

    def _pg(self, tool: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return sh("runuser", "-u", "postgres", "--", str(PG_BIN / tool), *args, timeout=timeout, cwd=self.dir)

    def _configure(self) -> None:
        # fsync off: the tests crash the server process, never the machine, and the page
        # cache survives a process crash; crash recovery still replays the WAL at each start.
        # Server-side keepalives and tcp_user_timeout end the sessions of a cut-off host
        # (and release what they hold) within seconds, as a production server should.
        settings = {
            "port": self.port,
            "listen_addresses": "'" + ",".join(self.listen) + "'",
            "unix_socket_directories": f"'{self.dir}'",
            "max_connections": 200,
            "shared_buffers": "'32MB'",
            "fsync": "off",
            "full_page_writes": "off",
            "tcp_keepalives_idle": 5,
            "tcp_keepalives_interval": 2,
            "tcp_keepalives_count": 2,
            "tcp_user_timeout": 2000,
            "log_min_messages": "warning",
            "log_line_prefix": "'%m [%p] '",
        }
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.writelines(f"{name} = {value}\n" for name, value in settings.items())
        networks = sorted({str(ipaddress.ip_network(f"{a}/24", strict=False)) for a in self.listen})
        hba = ["local all all trust", *(f"host all all {net} trust" for net in networks)]
        (self.data / "pg_hba.conf").write_text("\n".join(hba) + "\n")

    def start(self) -> datetime:
        """Start (after a crash: recover) and return when it accepts connections."""
        self._pg("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "start", timeout=90)
        return utcnow()

    def crash(self) -> datetime:
        """Immediate shutdown: every backend killed, nothing checkpointed. Returns when it began."""
        began = utcnow()
        self._pg("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30", "stop", timeout=60)
        return began

    @property
    def running(self) -> bool:
        done = sh("runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(self.data), "status",
                  check=False, cwd=self.dir)
        return done.returncode == 0

    def url(self, host: str | None = None) -> str:
        """A DATABASE_URL: over TCP to ``host``, or the unix socket."""
        where = host or urllib.parse.quote(str(self.dir), safe="")
        return f"postgresql://postgres@{where}:{self.port}/{DBNAME}"

    def sql(self, query: str, params: tuple | list = (), *, dbname: str = DBNAME) -> list[tuple]:
        with psycopg.connect(host=str(self.dir), port=self.port, user="postgres", dbname=dbname,
                             autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def rows(self, query: str, params: tuple | list = ()) -> list[dict[str, Any]]:
        """``sql`` on the site's database, each row a dict."""
        with psycopg.connect(host=str(self.dir), port=self.port, user="postgres", dbname=DBNAME, autocommit=True,
                             connect_timeout=5, row_factory=dict_row) as conn:
            return conn.execute(query, params).fetchall()

    def close(self) -> None:
        if (self.data / "postmaster.pid").exists():
            try:
                self.crash()
            except (RuntimeError, subprocess.TimeoutExpired):
                _kill_postmaster(self.data / "postmaster.pid")
        shutil.rmtree(self.dir, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- Processes of the site ----------------------------------------------------------------


def site_env(workdir: Path, database_url: str, **extra: str) -> dict[str, str]:
    """The environment of every process of the site: production settings (DEBUG off, the
    test run's SECRET_KEY), diagnostic kinds on, a short lease, JSON log lines; webhooks
    may go to the test's private addresses, and their catch-up runs every 3 s."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "DATABASE_URL"))}
    env.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="jobsite.settings",
        PYTHONPATH=str(ROOT),
        DEBUG="0",
        JOBSITE_VAR_DIR=str(workdir / "var"),
        MEDIA_ROOT=str(workdir / "documents"),
        JOBS_DIAGNOSTIC_KINDS="1",
        JOBS_LEASE_SECONDS=f"{LEASE:g}",
        JOBS_RETRY_BASE_SECONDS="0.2",
        JOBS_LOG_FORMAT="json",
        PYTHONUNBUFFERED="1",
        WEBHOOKS_ALLOW_PRIVATE="1",
        WEBHOOKS_CATCHUP_EVERY_MINUTES="0.05",
    )
    env.setdefault("SECRET_KEY", "partition-tests-" + os.urandom(24).hex())
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str, timeout: float = 120) -> str:
    done = subprocess.run([PYTHON, str(ROOT / "manage.py"), *args], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} exited with {done.returncode}:\n{done.stderr}")
    return done.stdout


def stop_group(proc: subprocess.Popen, timeout: float = 15) -> None:
    """SIGTERM the process group, then SIGKILL it if it has not exited in ``timeout``."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=timeout)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of the group
    proc.wait(timeout=5)


@dataclass
class Workers:
    """``runworkers`` on one host: its process, its name prefix, its log."""

    host: int
    name: str
    proc: subprocess.Popen
    log: Path

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        """The JSON log lines written so far (``name``: only that event)."""
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line being written
                if name is None or record.get("event") == name:
                    found.append(record)
        return found

    def stop(self) -> None:
        stop_group(self.proc)


def start_workers(network: Network, i: int, cluster: Cluster, env: dict[str, str], workdir: Path, *,
                  processes: int = 2, poll: float = POLL, tag: str = "",
                  extra_env: dict[str, str] | None = None) -> Workers:
    """runworkers in host ``i``'s namespace, named ``host<i>``, reaching the database over its link."""
    name = f"host{i}"
    log = workdir / f"{name}{tag}-{time.monotonic_ns()}.log"
    env = {**env, "DATABASE_URL": cluster.url(network.outside(i)), **(extra_env or {})}
    command = [*network.exec_prefix(i), "unshare", "--uts", "--", "sh", "-c", 'hostname "$0" && exec "$@"', name,
               PYTHON, str(ROOT / "manage.py"), "runworkers", "--processes", str(processes),
               "--lease", f"{LEASE:g}", "--poll-interval", f"{poll:g}", "--grace", "1"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    workers = Workers(i, name, proc, log)
    try:
        wait_until(lambda: proc.poll() is not None or len(workers.events("worker_started")) >= processes,
                   60, f"{name}'s workers to start")
        if proc.poll() is not None:
            raise RuntimeError(f"runworkers on {name} exited with {proc.returncode}:\n{log.read_text()}")
    except BaseException:
        workers.stop()
        raise
    return workers


class Web:
    """gunicorn serving the site on loopback, reaching the database over the unix socket."""

    def __init__(self, env: dict[str, str], workdir: Path, *, workers: int = 1, name: str = "gunicorn") -> None:
        self.port = _free_port()
        self.log = workdir / f"{name}.log"
        command = [PYTHON, "-m", "gunicorn", "jobsite.wsgi:application", "--bind", f"127.0.0.1:{self.port}",
                   "--pid", str(workdir / f"{name}.gunicorn.pid"),  # for reap_leftovers, should this run be killed
                   "--workers", str(workers), "--worker-class", "sync", "--timeout", "30",
                   "--access-logfile", "-", "--error-logfile", "-"]
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        try:
            wait_until(lambda: self.proc.poll() is not None or self._listening(), 60, "gunicorn to listen")
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.proc.returncode}:\n{self.log.read_text()}")
        except BaseException:
            self.close()
            raise

    def _listening(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
        except OSError:
            return False
        return True

    def request(self, method: str, path: str, token: str, *, body: dict | None = None,
                headers: dict[str, str] | None = None, timeout: float = 15) -> tuple[int, dict[str, str], Any]:
        """One API request on a new connection: status, headers, the decoded JSON body (or text)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            sent = {"Authorization": f"Bearer {token}", "Accept": "application/json", **(headers or {})}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                sent["Content-Type"] = "application/json"
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            raw = response.read()
            content_type = response.getheader("Content-Type", "")
            decoded: Any = json.loads(raw) if content_type.startswith("application/json") else raw.decode(
                errors="replace")
            return response.status, {k.lower(): v for k, v in response.getheaders()}, decoded
        finally:
            conn.close()

    def close(self) -> None:
        stop_group(self.proc)


# --- Webhooks: an endpoint every host reaches, and what it received ---------------------------


INVOICE = (ROOT / "agent" / "samples" / "invoice.txt").read_text()


def review_payload(n: int = 0) -> dict[str, str]:
    """A ``document_review`` of pasted text: the sample invoice, numbered ``n``. Its completion
    queues the deliveries of its events to the tenant's endpoints."""
    return {"text": INVOICE.replace("INV-2026-0143", f"INV-PT-{n:04d}")}


class WebhookSink:
    """A webhook endpoint of ``tenant`` (a row, as its admin would add it) whose receiver
    listens on the network's service address, so every host's workers deliver to it over
    their own link. ``script`` and ``delay`` are the receiver's (tests/webhook_receiver.py).
    Each test begins with no endpoint (the ``site`` fixture), so no catch-up chain either."""

    def __init__(self, network: Network, cluster: Cluster, tenant: str, *script: int | str,
                 delay: float = 0.0) -> None:
        self.cluster = cluster
        self.secret = "whsec_partition_" + os.urandom(16).hex()
        self.receiver = Receiver(*script, delay=delay, host=network.service)
        try:
            [(self.endpoint,)] = cluster.sql(
                "INSERT INTO agent_webhookendpoint (tenant_id, url, secret, document_finished, document_needs_action,"
                " active, created_at) SELECT id, %s, %s, true, true, true, now() FROM jobs_tenant WHERE slug = %s"
                " RETURNING id", (self.receiver.url, self.secret, tenant))
        except BaseException:
            self.receiver.close()
            raise

    def deliveries(self) -> list[dict[str, Any]]:
        """The endpoint's delivery jobs, oldest first."""
        from agent.inbox.webhooks import KIND_NAME

        return self.cluster.rows(
            "SELECT id, state, epoch, attempts, payload, result, last_error, external_started_at, leased_by"
            " FROM jobs_job WHERE kind = %s AND (payload->>'endpoint')::bigint = %s ORDER BY id",
            (KIND_NAME, self.endpoint))

    def owed(self) -> set[tuple[int, str]]:
        """(review, event) of every event the completed reviews owe this endpoint."""
        from agent.inbox.webhooks import REVIEW_KIND, events_of

        reviews = self.cluster.rows("SELECT id, needs_action FROM jobs_job WHERE kind = %s AND state = 'completed'",
                                    (REVIEW_KIND,))
        return {(r["id"], event) for r in reviews for event in events_of(r["needs_action"])}

    def settled(self) -> bool:
        """Every event owed has its delivery (from the review's follow-up or the catch-up), and
        every delivery has ended."""
        jobs = self.deliveries()
        made = {(j["payload"]["job"], j["payload"]["event"]) for j in jobs}
        return made >= self.owed() and all(j["state"] not in ("queued", "leased") for j in jobs)

    def check(self) -> dict[str, int]:
        """What the queue owed the receiver against what it got; the figures.

        Each owed event has one delivery job; each job ended ``completed`` (received exactly
        once, signed, about its own review and event) or ``unknown`` past its external-start
        marker (received at most once); the receiver got nothing the queue did not send."""
        jobs = self.deliveries()
        made = [(j["payload"]["job"], j["payload"]["event"]) for j in jobs]
        assert len(made) == len(set(made)), "an event was queued twice for the endpoint"
        assert set(made) == self.owed()
        ended = {j["id"]: (j["state"], j["last_error"]) for j in jobs if j["state"] != "completed"}
        assert all(state == "unknown" for state, _ in ended.values()), ended
        assert all(j["external_started_at"] is not None for j in jobs if j["state"] == "unknown")
        by_event = {f"evt_{j['id']}": j for j in jobs}
        received = self.receiver.received()
        assert set(received) <= set(by_event), set(received) - set(by_event)
        assert max(received.values(), default=0) <= 1, f"sent twice: {received.most_common(3)}"
        for event, job in by_event.items():
            if job["state"] == "completed":
                assert received[event] == 1, f"delivery {job['id']} completed but not received"
                assert job["result"]["sent"] and job["result"]["status"] == 200
                assert job["result"]["epoch"] == job["epoch"]  # completed by the epoch that sent it
        for request in self.receiver.requests:
            assert signature_ok(request, self.secret), request["headers"]
            body = json.loads(request["body"])
            job = by_event[body["id"]]
            assert (body["data"]["job_id"], body["event"]) == (job["payload"]["job"], job["payload"]["event"])
        return {"deliveries": len(jobs), "received": sum(received.values()),
                "completed": sum(j["state"] == "completed" for j in jobs),
                "unknown": sum(j["state"] == "unknown" for j in jobs),
                "unknown and received": sum(received[e] for e, j in by_event.items() if j["state"] == "unknown")}

    def close(self) -> None:
        self.receiver.close()


# --- A web host: the deploy recipe in a namespace -------------------------------------------

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def in_namespace(namespace: str, call: Callable[[], Any], timeout: float = 60) -> Any:
    """``call()`` on a thread that has joined ``namespace``'s network stack: the sockets it
    opens are that host's (its loopback, its routes). Other threads are not moved."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            fd = os.open(f"/run/netns/{namespace}", os.O_RDONLY)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    errno = ctypes.get_errno()
                    raise OSError(errno, f"setns({namespace}): {os.strerror(errno)}")
            finally:
                os.close(fd)
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001  handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=run, name=f"in-{namespace}", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise AssertionError(f"a call in {namespace} did not return within {timeout} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes
    seconds: float  # from the connection's opening to the body's last byte

    def json(self) -> Any:
        return json.loads(self.body)


class WebHost:
    """nginx (deploy/nginx/jobsite.conf) in front of gunicorn (deploy/gunicorn.conf.py) on
    host ``i``, both in its namespace with the production settings (HTTPS=1), gunicorn
    reaching the database over the host's link as a web host on its own machine would.
    nginx serves the static files itself, from the checkout's static/ folder."""

    GUNICORN_PORT = 8000  # the recipe's own: the namespace's ports are its own
    HTTPS_PORT = 8443

    def __init__(self, network: Network, i: int, cluster: Cluster, env: dict[str, str], workdir: Path, *,
                 workers: int = 3) -> None:
        from tests.deploy.nginx import NGINX, nginx_config  # the shipped file, substituted as there

        self.namespace = network.namespace(i)
        self.folder = workdir / f"web{i}"
        self.folder.mkdir(exist_ok=True)
        self.procs: list[subprocess.Popen] = []
        cert, key = self.folder / "cert.pem", self.folder / "key.pem"
        sh("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
           "-days", "1", "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert))
        conf = nginx_config(self.folder, upstream_port=self.GUNICORN_PORT, http_port=8080,
                            https_port=self.HTTPS_PORT, cert=cert, key=key)
        site = self.folder / "jobsite.conf"
        collected = f"alias {ROOT}/staticfiles/;"
        assert collected in site.read_text(), "deploy/nginx/jobsite.conf no longer serves /static/ this way"
        site.write_text(site.read_text().replace(collected, f"alias {ROOT}/static/;"))  # no collectstatic needed
        env = {**env, "DATABASE_URL": cluster.url(network.outside(i)), "HTTPS": "1",
               "ALLOWED_HOSTS": "127.0.0.1,localhost", "GUNICORN_BIND": f"127.0.0.1:{self.GUNICORN_PORT}",
               "GUNICORN_WORKERS": str(workers)}
        env.pop("GUNICORN_CMD_ARGS", None)
        inns = network.exec_prefix(i)
        self.log = self.folder / "gunicorn.log"
        try:
            with open(self.log, "wb") as out:
                self.procs.append(subprocess.Popen(
                    [*inns, PYTHON, "-m", "gunicorn", "-c", str(ROOT / "deploy" / "gunicorn.conf.py"),
                     "--pid", str(self.folder / "web.gunicorn.pid"), "jobsite.wsgi:application"],
                    env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True))
            errors = self.folder / "error.log"
            self.procs.append(subprocess.Popen(
                [*inns, NGINX, "-p", str(self.folder), "-c", str(conf), "-e", str(errors), "-g", "daemon off;"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
            wait_until(self._ready, 60, f"gunicorn and nginx on host {i} answering")
        except BaseException:
            self.close()
            raise

    def _ready(self) -> bool:
        for proc in self.procs:
            if proc.poll() is not None:
                raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}:\n{self.log.read_text()}")
        try:
            return self.request("GET", "/accounts/login/", timeout=2).status == 200
        except OSError:
            return False

    def request(self, method: str, path: str, *, headers: dict[str, str] | None = None, body: bytes | None = None,
                timeout: float = 15) -> Answer:
        """One request to nginx over HTTPS on a new connection, from the host's own loopback."""

        def send() -> Answer:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE  # a certificate made for this run
            started = time.monotonic()
            conn = http.client.HTTPSConnection("127.0.0.1", self.HTTPS_PORT, timeout=timeout, context=context)
            try:
                conn.request(method, path, body=body, headers=headers or {})
                response = conn.getresponse()
                data = response.read()
                return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, data,
                              time.monotonic() - started)
            finally:
                conn.close()

        return in_namespace(self.namespace, send, timeout=timeout + 5)

    def close(self) -> None:
        for proc in reversed(self.procs):
            stop_group(proc)
        self.procs.clear()
