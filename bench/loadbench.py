"""``manage.py loadbench``: the site under a mixed load, as Alice feels it.

On a fresh database (a SQLite file of its own, or a PostgreSQL database it creates and drops),
the production stack on loopback: gunicorn with ``deploy/gunicorn.conf.py`` behind a private
nginx running ``deploy/nginx/jobsite.conf`` (TLS, a certificate made for the run), and
``runworkers --processes 2``. For the run's length, bounded loops each:

- an uploader posts documents at a steady rate, a mix from the corpora (one-page and
  multi-page text PDFs, e-invoices, scans, photos), multipart through nginx with a token;
- ``pollers`` clients each wait for their jobs, asking once a second (``GET /jobs/<id>``, JSON,
  with the ETag of their last answer): the uploads come from ``NEWEST`` senders in turn, and each
  poller follows its sender's newest job; as many more join for the second half;
- a member (a browser session) opens the job list, a page a second, with and without filters.

It reports the time from upload to a finished review per kind of document (p50/p95/p99, from
the jobs' own ``created_at`` and ``finished_at``), the pollers' and the pages' latency in each
half (p50/p99), documents reviewed per minute per core, the peak memory of the workers' and of
the web's process trees, and where a review's time goes: waiting in the queue (created to the
handler's start), fetching the document, reading its text layer, OCR, keeping its page images
(the ``review_read`` log event), the fields (the ``validate`` step), and the note and the
writes (the ``draft`` step to the completion). Everything binds to 127.0.0.1.
"""

from __future__ import annotations

import functools
import http.client
import itertools
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .nginx import NGINX, nginx_config

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
CORPUS = ROOT / "tests" / "corpus"
SAMPLES = ROOT / "agent" / "samples"
NEWEST = 20  # the uploads' senders, in turn: each poller follows one's newest job
PAGE_SECONDS = 1.0  # the member opens a list page this often
STARTUP_SECONDS = 60
WARM_UPS = 4
DRAIN_SECONDS = 120  # after the uploads stop, the backlog gets this long to finish

# The upload mix: (kind of document, share). Shares follow what a small firm's inbox holds.
MIX = (
    ("text, 1 page", 0.45),
    ("text, multi-page", 0.15),
    ("e-invoice", 0.15),
    ("scan", 0.15),
    ("photo", 0.10),
)
# ``loadbench --only`` names kinds of document by these.
SHORT_NAMES = {"text": "text, 1 page", "multipage": "text, multi-page", "einvoice": "e-invoice", "scan": "scan",
               "photo": "photo"}


def corpus_files() -> dict[str, list[Path]]:
    """The corpora's documents by kind (each kind's files, sorted: the same mix on every run)."""
    from pypdf import PdfReader

    text: list[Path] = sorted((CORPUS / "multilingual").glob("*/*.pdf"))
    one: list[Path] = []
    many: list[Path] = []
    for path in text:
        (one if len(PdfReader(path).pages) == 1 else many).append(path)
    einvoices = [*sorted((CORPUS / "einvoices" / "pdf").glob("*.pdf")),
                 *sorted((CORPUS / "einvoices" / "xml").glob("*.xml"))]
    real = CORPUS / "real"
    scans = [*sorted(real.glob("*/*-scan.pdf")), SAMPLES / "invoice-scanned.pdf"]
    photos = sorted([*real.glob("*/*-photo.jpg"), *real.glob("*/*-photo.png")])
    found = {"text, 1 page": one, "text, multi-page": many, "e-invoice": einvoices, "scan": scans, "photo": photos}
    return {kind: files for kind, files in found.items() if files}


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@functools.cache
def _tls() -> ssl.SSLContext:
    """One context for every connection of the load: making one reads the system's certificates
    (25 ms of CPU under this process's GIL), which a hundred pollers connecting in their first
    second would queue behind, and a population of real clients does not share."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # a self-signed certificate made for this run, on loopback
    return context


# --- The stack ----------------------------------------------------------------------------


@dataclass
class Stack:
    env: dict[str, str]
    workdir: Path
    https: int = 0
    token: str = ""
    session: str = ""
    web: subprocess.Popen[bytes] | None = None
    workers: subprocess.Popen[bytes] | None = None
    nginx: subprocess.Popen[bytes] | None = None
    worker_log: Path = field(default_factory=Path)
    site: Path = ROOT  # the checkout whose manage.py, gunicorn and settings run

    def manage(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run([PYTHON, str(self.site / "manage.py"), *args], env=self.env, cwd=self.site, check=False,
                              capture_output=True, text=True, input=stdin, timeout=300)
        if done.returncode:
            raise RuntimeError(f"manage.py {args[0]} failed: {done.stderr[-2000:]}")
        return done.stdout.strip()


def _database(url: str | None, workdir: Path) -> tuple[str, str | None]:
    """The run's database URL, and the PostgreSQL database to drop after it (None for SQLite)."""
    if not url:
        return f"sqlite:///{workdir / 'load.sqlite3'}", None
    import psycopg

    base, _, _name = url.rpartition("/")
    name = f"loadbench_{os.getpid()}_{secrets.token_hex(3)}"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{base}/{name}", name


def _drop(url: str, name: str) -> None:
    import psycopg

    base = url.rpartition("/")[0]
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _wait(predicate: Any, timeout: float, what: str, proc: subprocess.Popen[bytes] | None = None) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what}: the process exited with {proc.returncode}")
        if predicate():
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what}: not within {timeout} s")


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None:
        return
    if proc.poll() is None:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=40)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


SETUP_SCRIPT = """
import secrets
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.core.management import call_command
from accounts import tokens
from accounts.models import User
call_command("createmember", "member", tenant="bench", password=secrets.token_urlsafe(16))
user = User.objects.get(username="member")
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
print(tokens.issue(user), session.session_key)
"""


@contextmanager
def stack(database_url: str | None, *, gunicorn_workers: int | None, processes: int,
          site: Path = ROOT) -> Iterator[Stack]:
    """gunicorn behind nginx and ``runworkers`` on a fresh database, all on loopback, each run
    from the checkout ``site`` (another one's code, measured with this one's load: ``--site``)."""
    if not os.access(NGINX, os.X_OK):
        raise RuntimeError(f"no nginx at {NGINX} (apt-get install nginx)")
    openssl = shutil.which("openssl")
    if not openssl:
        raise RuntimeError("no openssl to make the run's certificate (apt-get install openssl)")
    with tempfile.TemporaryDirectory(prefix="loadbench-") as tmp:
        workdir = Path(tmp)
        url, dropped = _database(database_url, workdir)
        env = dict(os.environ, DEBUG="0", HTTPS="1", SECRET_KEY=secrets.token_urlsafe(50),
                   ALLOWED_HOSTS="127.0.0.1,localhost", DATABASE_URL=url, JOBSITE_VAR_DIR=str(workdir / "var"),
                   DJANGO_SETTINGS_MODULE="jobsite.settings", PYTHONPATH=str(site), JOBS_LOG_LEVEL="INFO")
        for name in ("GUNICORN_CMD_ARGS", "JOBSITE_PROCESS"):
            env.pop(name, None)
        run = Stack(env=env, workdir=workdir, worker_log=workdir / "workers.log", site=site)
        try:
            run.manage("migrate", "--noinput")
            run.token, run.session = run.manage("shell", stdin=SETUP_SCRIPT).splitlines()[-1].split()
            cert, key = workdir / "cert.pem", workdir / "key.pem"
            subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                            "-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)],
                           check=True, capture_output=True, timeout=30)
            upstream = free_port()
            args = [PYTHON, "-m", "gunicorn", "-c", str(site / "deploy" / "gunicorn.conf.py"),
                    "--bind", f"127.0.0.1:{upstream}", "--access-logfile", str(workdir / "access.log")]
            if gunicorn_workers:
                args += ["--workers", str(gunicorn_workers)]
            with (workdir / "gunicorn.log").open("w") as out:
                run.web = subprocess.Popen([*args, "jobsite.wsgi:application"], cwd=site, env=env,
                                           start_new_session=True, stdout=out, stderr=subprocess.STDOUT)
            _wait(lambda: _listening(upstream), STARTUP_SECONDS, "gunicorn listening", run.web)
            nginx_dir = workdir / "nginx"
            nginx_dir.mkdir()
            http_port, run.https = free_port(), free_port()
            conf = nginx_config(nginx_dir, upstream_port=upstream, http_port=http_port, https_port=run.https,
                                cert=cert, key=key, root=site)
            run.nginx = subprocess.Popen([NGINX, "-p", str(nginx_dir), "-c", str(conf), "-e",
                                          str(nginx_dir / "error.log"), "-g", "daemon off;"],
                                         start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _wait(lambda: _listening(run.https), STARTUP_SECONDS, "nginx listening", run.nginx)
            with run.worker_log.open("w") as out:
                run.workers = subprocess.Popen(
                    [PYTHON, str(site / "manage.py"), "runworkers", "--processes", str(processes)],
                    cwd=site, env=env, start_new_session=True, stdout=out, stderr=subprocess.STDOUT)
            yield run
        finally:
            for proc in (run.workers, run.nginx, run.web):
                _stop(proc)
            if dropped:
                _drop(database_url or "", dropped)


# --- Memory --------------------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with suppress(OSError, ValueError, IndexError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            tree.setdefault(ppid, []).append(int(entry))
    return tree


def _rss_mb(pid: int) -> float:
    with suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def tree_rss_mb(root: int, tree: dict[int, list[int]]) -> tuple[float, float]:
    """The process tree's resident memory in all, and its largest process's (MB)."""
    total, largest, todo = 0.0, 0.0, [root]
    while todo:
        pid = todo.pop()
        rss = _rss_mb(pid)
        total, largest = total + rss, max(largest, rss)
        todo += tree.get(pid, [])
    return total, largest


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds a process tree has used: its live processes' own and their reaped children's
    (a gunicorn worker recycled mid-run is counted in its master's)."""
    tree, ticks, todo = _children(), 0, [root]
    while todo:
        pid = todo.pop()
        with suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
        todo += tree.get(pid, [])
    return ticks / os.sysconf("SC_CLK_TCK")


class Memory(threading.Thread):
    """Samples the web's and the workers' process trees twice a second; keeps each one's peaks."""

    def __init__(self, trees: dict[str, int], stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.trees, self.stop = trees, stop
        self.peaks = {name: {"total_mb": 0.0, "process_mb": 0.0} for name in trees}

    def run(self) -> None:
        while not self.stop.wait(0.5):
            tree = _children()
            for name, pid in self.trees.items():
                total, largest = tree_rss_mb(pid, tree)
                peak = self.peaks[name]
                peak["total_mb"], peak["process_mb"] = max(peak["total_mb"], total), max(peak["process_mb"], largest)


# --- The load --------------------------------------------------------------------------------


class Client:
    """One keep-alive HTTPS connection through nginx."""

    def __init__(self, port: int, headers: dict[str, str]) -> None:
        self.port, self.headers = port, headers
        self.conn: http.client.HTTPSConnection | None = None
        self.connects = 0  # connections made (each a TLS handshake through nginx)

    def request(self, method: str, path: str, *, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=30, context=_tls())
                self.connects += 1
            try:
                self.conn.request(method, path, body=body, headers={**self.headers, **(headers or {})})
                response = self.conn.getresponse()
                data = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self.close()
                return response.status, dict(response.getheaders()), data
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def multipart(name: str, content: bytes, key: str) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="kind"\r\n\r\ndocument_review\r\n'.encode(),
        f'--{boundary}\r\nContent-Disposition: form-data; name="idempotency_key"\r\n\r\n{key}\r\n'.encode(),
        (f'--{boundary}\r\nContent-Disposition: form-data; name="document"; filename="{name}"\r\n'
         "Content-Type: application/octet-stream\r\n\r\n").encode() + content + b"\r\n",
        f"--{boundary}--\r\n".encode(),
    ]
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


@dataclass
class Load:
    """What the load's loops saw, shared between their threads."""

    jobs: list[tuple[int, str]] = field(default_factory=list)  # (job id, kind of document), in upload order
    refused: list[str] = field(default_factory=list)
    polls: dict[str, list[float]] = field(default_factory=lambda: {"first": [], "second": []})
    not_modified: dict[str, int] = field(default_factory=lambda: {"first": 0, "second": 0})
    # ``polls`` apart: those that opened their connection (its TLS handshake: a poller's first) and the rest.
    connecting: dict[str, list[float]] = field(default_factory=lambda: {"first": [], "second": []})
    connected: dict[str, list[float]] = field(default_factory=lambda: {"first": [], "second": []})
    poll_failures: int = 0
    pages: dict[str, list[float]] = field(default_factory=lambda: {"first": [], "second": []})
    page_failures: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def uploader(port: int, token: str, load: Load, *, per_minute: float, until: float, stop: threading.Event,
             files: dict[str, list[Path]], seed: int) -> None:
    """Posts a document every 60/per_minute seconds until ``until``: kinds drawn by MIX, files in turn."""
    chooser = random.Random(seed)  # noqa: S311  a reproducible mix, not a secret
    kinds = [kind for kind, _ in MIX if kind in files]
    weights = [share for kind, share in MIX if kind in files]
    turns = {kind: itertools.cycle(files[kind]) for kind in kinds}
    client = Client(port, {"Authorization": f"Bearer {token}", "Accept": "application/json"})
    tick = time.monotonic()
    while tick < until and not stop.is_set():
        stop.wait(max(tick - time.monotonic(), 0))
        kind = chooser.choices(kinds, weights)[0]
        path = next(turns[kind])
        key = uuid.uuid4().hex
        body, content_type = multipart(path.name, path.read_bytes(), key)
        try:
            status, _, data = client.request("POST", "/jobs", body=body, headers={"Content-Type": content_type,
                                                                                 "Idempotency-Key": key})
        except (OSError, http.client.HTTPException) as exc:
            status, data = 0, str(exc).encode()
        with load.lock:
            if status == 202:
                load.jobs.append((int(json.loads(data)["id"]), kind))
            else:
                load.refused.append(f"{path.name}: {status} {data[:200]!r}")
        tick += 60.0 / per_minute
    client.close()


def poller(port: int, token: str, load: Load, index: int, *, start: float, half: float, until: float,
           stop: threading.Event) -> None:
    """A client waiting for its jobs, once a second, with the ETag of its last answer. The uploads
    come from ``NEWEST`` senders in turn; the poller is one of its sender's clients and follows that
    sender's newest job (before its first, one of those uploaded before the load). So an upload moves
    one sender's pollers to a job they never asked about, not every poller at once: jumping all of
    them at each upload made them 200 first reads in the same second, which clients waiting each
    for its own job never do."""
    client = Client(port, {"Authorization": f"Bearer {token}", "Accept": "application/json"})
    tags: dict[str, str] = {}
    sender, path = index % NEWEST, ""
    tick = start
    while tick < until and not stop.is_set():
        stop.wait(max(tick - time.monotonic(), 0))
        with load.lock:
            uploads = [job_id for job_id, kind in load.jobs if kind != "warm-up"]
            before = [job_id for job_id, kind in load.jobs if kind == "warm-up"] or uploads
        ours = uploads[sender::NEWEST]
        if ours:
            path = f"/jobs/{ours[-1]}"
        elif not path and before:
            path = f"/jobs/{before[index % len(before)]}"
        if path:
            began, connects = time.perf_counter(), client.connects
            try:
                status, headers, _ = client.request("GET", path, headers={"If-None-Match": tags[path]}
                                                    if path in tags else None)
            except (OSError, http.client.HTTPException):
                status, headers = 0, {}
            took = time.perf_counter() - began
            phase = "first" if tick < half else "second"
            with load.lock:
                if status in (200, 304):
                    load.polls[phase].append(took)
                    (load.connecting if client.connects != connects else load.connected)[phase].append(took)
                    load.not_modified[phase] += status == 304
                else:
                    load.poll_failures += 1
            etag = headers.get("ETag") or headers.get("Etag")
            if etag:
                tags[path] = etag
        tick += 1.0
    client.close()


LIST_PAGES = ("/jobs", "/jobs?page=2", "/jobs?state=completed", "/jobs?q=invoice", "/jobs?state=queued")


def member(port: int, session: str, load: Load, *, start: float, half: float, until: float,
           stop: threading.Event) -> None:
    """A member browsing the job list in a browser: a list page a second."""
    client = Client(port, {"Cookie": f"sessionid={session}", "Accept": "text/html"})
    tick = start
    for path in itertools.cycle(LIST_PAGES):
        if tick >= until or stop.is_set():
            break
        stop.wait(max(tick - time.monotonic(), 0))
        began = time.perf_counter()
        try:
            status, _, _ = client.request("GET", path)
        except (OSError, http.client.HTTPException):
            status = 0
        took = time.perf_counter() - began
        with load.lock:
            if status == 200:
                load.pages["first" if tick < half else "second"].append(took)
            else:
                load.page_failures += 1
        tick += PAGE_SECONDS
    client.close()


def warm_up(site: Stack, load: Load, files: dict[str, list[Path]], *, count: int, out: Any) -> None:
    """A few one-page documents reviewed before the clock starts: the workers' children have
    their libraries loaded, and the pollers have jobs to ask about. Not counted."""
    stop = threading.Event()
    warm = Load()
    uploader(site.https, site.token, warm, per_minute=600, until=time.monotonic() + count * 0.1 - 0.05, stop=stop,
             files={"text, 1 page": files["text, 1 page"]}, seed=0)
    ids = {job_id for job_id, _ in warm.jobs}
    wait_for_reviews(site, ids, timeout=STARTUP_SECONDS)
    load.jobs.extend((job_id, "warm-up") for job_id in sorted(ids))
    out(f"warmed up: {len(ids)} documents reviewed")


def wait_for_reviews(site: Stack, ids: set[int], *, timeout: float) -> None:
    """Until none of the jobs ``ids`` is queued or leased (asked through the API), or ``timeout``."""
    client = Client(site.https, {"Authorization": f"Bearer {site.token}", "Accept": "application/json"})
    live = set(ids)
    end = time.monotonic() + timeout
    try:
        while live and time.monotonic() < end:
            for job_id in sorted(live):
                status, _, body = client.request("GET", f"/jobs/{job_id}")
                if status == 200 and json.loads(body)["state"] not in ("queued", "leased"):
                    live.discard(job_id)
            if live:
                time.sleep(0.25)
    finally:
        client.close()


# --- What the jobs say ----------------------------------------------------------------------


JOBS_SCRIPT = """
import json
from jobs.models import Job
from agent.models import Checkpoint
steps = {c.job_id: c.steps for c in Checkpoint.objects.all()}
out = []
for job in Job.objects.filter(kind="document_review").only("id", "state", "created_at", "started_at", "finished_at",
                                                                    "failure_code"):
    out.append({"id": job.pk, "state": job.state, "failure": job.failure_code, "created": job.created_at.timestamp(),
                "started": job.started_at.timestamp() if job.started_at else None,
                "finished": job.finished_at.timestamp() if job.finished_at else None,
                "steps": {s["tool"]: s["at"] for s in steps.get(job.pk, [])}})
print(json.dumps(out))
"""

READ_EVENT = re.compile(r"event=review_read\b(.*)$")


def read_spans(log: Path) -> dict[int, dict[str, float]]:
    """Each job's ``review_read`` durations (seconds), from the workers' log."""
    spans: dict[int, dict[str, float]] = {}
    for line in log.read_text(errors="replace").splitlines():
        found = READ_EVENT.search(line)
        if not found:
            continue
        values = dict(re.findall(r"(\w+)=(\S+)", found.group(1)))
        with suppress(KeyError, ValueError):
            spans[int(values["job"])] = {name: int(values[f"{name}_ms"]) / 1000
                                         for name in ("fetch", "read", "ocr", "images")}
    return spans


def _at(value: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(value).timestamp()


def review_figures(jobs: list[dict[str, Any]], kinds: dict[int, str], spans: dict[int, dict[str, float]],
                   ) -> dict[str, Any]:
    """Upload to finished review per kind of document, and where the time went (seconds)."""
    by_kind: dict[str, list[float]] = {}
    parts: dict[str, dict[str, list[float]]] = {}
    states: dict[str, int] = {}
    for job in jobs:
        kind = kinds.get(job["id"])
        if kind is None:
            continue  # not one of the run's uploads
        state = job["state"] + (f" ({job['failure']})" if job["failure"] and job["state"] != "completed" else "")
        states[state] = states.get(state, 0) + 1
        if job["state"] != "completed" or job["finished"] is None:
            continue
        by_kind.setdefault(kind, []).append(job["finished"] - job["created"])
        steps = job["steps"]
        if job["started"] is None or not {"extract", "validate", "draft"} <= set(steps):
            continue
        extract, validate, draft = (_at(steps[name]) for name in ("extract", "validate", "draft"))
        read = spans.get(job["id"], {})
        known = sum(read.values())
        into = parts.setdefault(kind, {})
        for name, seconds in (("queue wait", job["started"] - job["created"]),
                              ("fetch", read.get("fetch", 0.0)), ("reading", read.get("read", 0.0)),
                              ("OCR", read.get("ocr", 0.0)), ("page images", read.get("images", 0.0)),
                              ("extract, other", max(extract - job["started"] - known, 0.0)),
                              ("fields", validate - extract), ("note and writes", job["finished"] - validate),
                              ("of which note", draft - validate)):
            into.setdefault(name, []).append(max(seconds, 0.0))
    latency = {kind: {"reviews": len(values), **{f"p{q}": percentile(values, q / 100) for q in (50, 95, 99)}}
               for kind, values in by_kind.items()}
    every = [v for values in by_kind.values() for v in values]
    latency["all"] = {"reviews": len(every), **{f"p{q}": percentile(every, q / 100) for q in (50, 95, 99)}}
    spent = {kind: {name: sum(values) / len(values) for name, values in into.items()} for kind, into in parts.items()}
    return {"latency": latency, "spent": spent, "states": states}


# --- The run ------------------------------------------------------------------------------


def run(*, database_url: str | None, seconds: float, per_minute: float, pollers: int, processes: int = 2,
        gunicorn_workers: int | None = None, seed: int = 1, warm_ups: int = WARM_UPS, out: Any = None,
        only: list[str] | None = None, site: Path = ROOT) -> dict[str, Any]:
    """One run on one store (``database_url`` None: a SQLite file); the figures as a dict.
    ``only``: the kinds of document to upload (``SHORT_NAMES``), all by default."""
    files = corpus_files()
    if only:
        files = {kind: paths for kind, paths in files.items() if kind in {SHORT_NAMES[name] for name in only}}
    def say(text: str) -> None:
        if out is not None:
            print(text, file=out, flush=True)

    with stack(database_url, gunicorn_workers=gunicorn_workers, processes=processes, site=site) as stacked:
        say(f"stack up: nginx :{stacked.https} → gunicorn, runworkers --processes {processes}")
        stop = threading.Event()
        memory = Memory({"web": getattr(stacked.web, "pid", 0), "workers": getattr(stacked.workers, "pid", 0)}, stop)
        memory.start()
        load = Load()
        warm_up(stacked, load, files, count=warm_ups, out=say)
        start = time.monotonic() + 1.0
        half, until = start + seconds / 2, start + seconds
        threads = [threading.Thread(target=uploader, args=(stacked.https, stacked.token, load),
                                    kwargs={"per_minute": per_minute, "until": until, "stop": stop, "files": files,
                                            "seed": seed})]
        threads += [threading.Thread(target=poller, args=(stacked.https, stacked.token, load, i),
                                     kwargs={"start": start + i / pollers, "half": half, "until": until,
                                             "stop": stop})
                    for i in range(pollers)]
        threads += [threading.Thread(target=poller, args=(stacked.https, stacked.token, load, pollers + i),
                                     kwargs={"start": half + i / pollers, "half": half, "until": until,
                                             "stop": stop})
                    for i in range(pollers)]
        threads.append(threading.Thread(target=member, args=(stacked.https, stacked.session, load),
                                        kwargs={"start": start + 0.5, "half": half, "until": until, "stop": stop}))
        cpu_before = os.times()
        fronts = {"web": getattr(stacked.web, "pid", 0), "nginx": getattr(stacked.nginx, "pid", 0)}
        front_before = {name: tree_cpu_seconds(pid) for name, pid in fronts.items()}
        began = time.monotonic()
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=max(until - time.monotonic(), 0) + 60)
        finally:
            stop.set()
        front_cpu = {name: tree_cpu_seconds(pid) - front_before[name] for name, pid in fronts.items()}
        uploaded = sum(1 for _, kind in load.jobs if kind != "warm-up")
        say(f"load done: {uploaded} uploads, {len(load.refused)} refused {load.refused[:3]}; waiting for the backlog")
        kinds = {job_id: kind for job_id, kind in load.jobs if kind != "warm-up"}
        wait_for_reviews(stacked, set(kinds), timeout=DRAIN_SECONDS)
        jobs = json.loads(stacked.manage("shell", stdin=JOBS_SCRIPT).splitlines()[-1])
        elapsed = time.monotonic() - began
        cpu_after = os.times()
        memory.join(timeout=2)
        figures = review_figures(jobs, kinds, read_spans(stacked.worker_log))
    reviewed = [j for j in jobs if j["id"] in kinds and j["state"] == "completed" and j["finished"]]
    window = (max(j["finished"] for j in reviewed) - min(j["created"] for j in reviewed)) if reviewed else 0.0
    cores = os.cpu_count() or 1
    requests = sum(map(len, load.polls.values())) + sum(map(len, load.pages.values())) + uploaded

    def latencies(values: list[float]) -> dict[str, Any]:
        return {"requests": len(values), "p50_ms": _ms(percentile(values, 0.5)),
                "p99_ms": _ms(percentile(values, 0.99))}

    return {
        "store": "PostgreSQL" if database_url else "SQLite", "site": str(site), "seconds": seconds,
        "per_minute": per_minute,
        "pollers": pollers, "processes": processes, "uploads": uploaded, "refused": load.refused[:5],
        "reviews": figures, "cores": cores,
        "reviewed_per_minute_per_core": round(len(reviewed) / (window / 60) / cores, 1) if window else None,
        "polls": {phase: {**latencies(values), "not_modified": load.not_modified[phase],
                          "connecting": latencies(load.connecting[phase]),
                          "connected": latencies(load.connected[phase])}
                  for phase, values in load.polls.items()},
        "poll_failures": load.poll_failures,
        "pages": {phase: latencies(values) for phase, values in load.pages.items()},
        "page_failures": load.page_failures,
        "memory": {name: {k: round(v) for k, v in peak.items()} for name, peak in memory.peaks.items()},
        "load_average": os.getloadavg(), "elapsed": round(elapsed, 1),
        "bench_cpu_seconds": round(sum(cpu_after[:2]) - sum(cpu_before[:2]), 1),
        # What a request cost the web's and nginx's processes, all requests of the load together.
        "cpu_ms_per_request": {name: round(seconds * 1000 / requests, 2) if requests else None
                               for name, seconds in front_cpu.items()},
    }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def table(report: dict[str, Any]) -> str:
    """The run's figures as Markdown."""
    def s(value: float | None) -> str:
        return "—" if value is None else f"{value:.2f} s"

    lines = [f"### {report['store']}: {report['seconds']:.0f} s, {report['per_minute']:g} uploads a minute "
             f"({report['uploads']} uploaded, {len(report['refused'])} refused), runworkers --processes "
             f"{report['processes']}, {report['pollers']} then {2 * report['pollers']} pollers, one member browsing",
             "", "| document | reviews | p50 | p95 | p99 |", "|---|---|---|---|---|"]
    for kind, row in report["reviews"]["latency"].items():
        lines.append(f"| {kind} | {row['reviews']} | {s(row['p50'])} | {s(row['p95'])} | {s(row['p99'])} |")
    lines += ["", f"job states: {report['reviews']['states']}", "",
              "| requests | pollers | requests | not modified | p50 | p99 |", "|---|---|---|---|---|---|"]
    for phase, count in (("first", report["pollers"]), ("second", 2 * report["pollers"])):
        row = report["polls"][phase]
        lines.append(f"| `GET /jobs/<id>` (JSON) | {count} | {row['requests']} | {row['not_modified']} | "
                     f"{row['p50_ms']} ms | {row['p99_ms']} ms |")
        for part, name in (("connected", "on an open connection"), ("connecting", "opening one (TLS)")):
            lines.append(f"| … {name} | {count} | {row[part]['requests']} | | {row[part]['p50_ms']} ms | "
                         f"{row[part]['p99_ms']} ms |")
    for phase, count in (("first", report["pollers"]), ("second", 2 * report["pollers"])):
        row = report["pages"][phase]
        lines.append(f"| list pages (HTML) | {count} | {row['requests']} | — | {row['p50_ms']} ms | "
                     f"{row['p99_ms']} ms |")
    lines += ["", f"failures: {report['poll_failures']} polls, {report['page_failures']} pages; reviewed "
              f"{report['reviewed_per_minute_per_core']} documents a minute per core ({report['cores']} cores); "
              f"peak memory: web {report['memory']['web']['total_mb']} MB in all "
              f"(largest process {report['memory']['web']['process_mb']} MB), workers "
              f"{report['memory']['workers']['total_mb']} MB (largest {report['memory']['workers']['process_mb']} MB); "
              f"load average {', '.join(f'{v:.2f}' for v in report['load_average'])}; the load's own client took "
              f"{report['bench_cpu_seconds']} CPU s; CPU a request: gunicorn "
              f"{report['cpu_ms_per_request']['web']} ms, nginx {report['cpu_ms_per_request']['nginx']} ms", "",
              "Where a review's time goes (mean seconds):", ""]
    spent = report["reviews"]["spent"]
    names = ["queue wait", "fetch", "reading", "OCR", "page images", "extract, other", "fields", "note and writes"]
    lines += ["| document | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for kind, row in spent.items():
        lines.append(f"| {kind} | " + " | ".join(f"{row.get(n, 0.0):.3f}" for n in names) + " |")
    return "\n".join(lines)


TARGETS = ("1-page text PDF p50 ≤ 1 s and p99 ≤ 3 s; pollers p99 < 50 ms; list pages p99 < 200 ms; none slower "
           "with twice the pollers")


def verdicts(report: dict[str, Any]) -> list[str]:
    """Each target, MET or NOT MET."""
    one = report["reviews"]["latency"].get("text, 1 page", {})
    polls, pages = report["polls"], report["pages"]

    def check(name: str, ok: bool | None) -> str:
        return f"{name}: {'—' if ok is None else 'MET' if ok else 'NOT MET'}"

    def le(a: float | None, b: float) -> bool | None:
        return None if a is None else a <= b

    def no_slower(row: dict[str, Any], slack: float = 1.25) -> bool | None:
        first, second = row["first"]["p99_ms"], row["second"]["p99_ms"]
        return None if first is None or second is None else second <= max(first * slack, first + 5)

    return [check("1-page text PDF p50 ≤ 1 s", le(one.get("p50"), 1.0)),
            check("1-page text PDF p99 ≤ 3 s", le(one.get("p99"), 3.0)),
            check("pollers p99 < 50 ms", None if polls["first"]["p99_ms"] is None or polls["second"]["p99_ms"] is None
                  else max(polls["first"]["p99_ms"], polls["second"]["p99_ms"]) < 50),
            check("list pages p99 < 200 ms", None if pages["first"]["p99_ms"] is None
                  or pages["second"]["p99_ms"] is None
                  else max(pages["first"]["p99_ms"], pages["second"]["p99_ms"]) < 200),
            check("pollers no slower with twice as many (p99 within 25 % or 5 ms)", no_slower(polls)),
            check("list pages no slower with twice the pollers (p99 within 25 % or 5 ms)", no_slower(pages))]
