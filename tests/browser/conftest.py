"""Headless Chromium (Debian's, never a downloaded one) against a live server and a real worker.

Skipped, with the reason printed, when /usr/bin/chromium (or $CHROMIUM) or the playwright
package is missing; ``REQUIRE_BROWSER=1`` (as in CI) turns that into a failure.
"""

from __future__ import annotations

import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections

from documents import acceptance
from tests.conftest import PYTHON, ROOT, child_env

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = ROOT / "artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


def off_loop(fn, *args, **kwargs):
    """Make a database call on a plain thread, then close that thread's connection.

    With Playwright's loop running, Django would keep this thread's connection in a
    context variable of the loop's context: a second connection that nobody closes, which
    blocks dropping the test database on PostgreSQL.
    """
    def call():
        try:
            return fn(*args, **kwargs)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call).result()


def _missing(reason: str):
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(f"SKIPPED browser test: {reason}")


@pytest.fixture
def chromium(transactional_db):
    """Per test, not per session: Playwright's sync API runs an event loop in this thread
    while it lives, and Django refuses database calls beside one (use ``off_loop``). It is
    torn down before the test database is flushed."""
    if not os.access(CHROMIUM, os.X_OK):
        _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install -e '.[test]')")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def browser_settings(settings):
    settings.JOBS = {**settings.JOBS, "DIAGNOSTIC_KINDS": True}
    return settings


@pytest.fixture
def start_worker(live_server, browser_settings):
    """Start ``manage.py runworkers --processes 1`` on the live server's database.

    Stopped with SIGTERM at the end (the command finishes or gives back its job, exits 0).
    """
    procs: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        cmd = [PYTHON, str(ROOT / "manage.py"), "runworkers", "--processes", "1", "--poll-interval", "0.5"]
        env = child_env(JOBS_DIAGNOSTIC_KINDS="1", MEDIA_ROOT=str(browser_settings.MEDIA_ROOT))
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
def new_context(chromium, live_server):
    """Fresh browser contexts on the live server, each with axe-core ready for ``audit``."""
    from . import audit

    contexts = []

    def make(**options):
        context = chromium.new_context(base_url=live_server.url, **options)
        audit.prepare(context)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def login(new_context):
    """A fresh browser context logged in as ``username``, on ``start`` (the submit form); its page is returned."""

    def login_(username: str, password: str, *, start: str = "/jobs/new", **options):
        page = new_context(**options).new_page()
        page.goto(start)
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"**{start}")
        return page

    return login_


def completed_review(user, name: str, result: dict, *, key: str, text: str = ""):
    """A review of the document ``name`` completed with ``result`` and the kind's own summary, as a
    worker completes one (``key``: the submission's operation key; ``text``: the document's)."""
    from documents.store import Upload
    from jobs import kinds, queue
    from jobs.clock import system_clock

    now = system_clock.now()
    job = acceptance.accept(scope_id=user.tenant_id, user_id=user.pk, kind="document_review", payload={},
                            operation_key=key, now=now,
                            document=Upload((text or f"Invoice {name}").encode(), name, "text/plain")).job
    claim = queue.claim(now=now, worker="browser-test")
    assert claim is not None and claim.job_id == job.pk
    summary = kinds.get("document_review").summarize(result)
    assert queue.complete(job_id=job.pk, epoch=claim.epoch, result=result, now=system_clock.now(), summary=summary)
    return job
