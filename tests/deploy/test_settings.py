"""The production settings path: the environment of docs/operations.md, *Deploying*.

Settings are read once per process from the environment, so each case runs Django in a
child process with exactly that environment.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import string
import subprocess

import pytest

from tests.conftest import PYTHON, ROOT, child_env

pytestmark = pytest.mark.slow

PRODUCTION = {"DEBUG": "0", "HTTPS": "1", "ALLOWED_HOSTS": "jobs.example.com"}


def run_django(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def environment(**values: str | None) -> dict[str, str]:
    """This process's environment with ``values`` set (None: removed)."""
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="jobsite.settings", PYTHONPATH=str(ROOT))
    for name, value in values.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def test_check_deploy_is_clean_under_the_production_environment():
    env = environment(**PRODUCTION, SECRET_KEY=secrets.token_urlsafe(50))
    result = run_django(env, "manage.py", "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.parametrize("key", [
    None,                                                       # not set
    "",                                                         # set but empty
    "django-insecure-development-key-never-use-it-with-DEBUG-off",  # the development key
    "insecure-development-key-set-SECRET_KEY-in-production",    # the key earlier versions shipped
    "django-insecure-" + "x" * 50,                              # any key Django marks as generated
    "x",                                                        # too short
    "changeme-please-set-a-real-key",                           # too short
    "abcd" * 30,                                                # long, but four characters
    (string.ascii_letters + string.digits)[:49],                # one character short of Django's 50
])
def test_debug_off_refuses_to_start_without_a_key_of_its_own(key):
    env = environment(**PRODUCTION, SECRET_KEY=key)
    for command in (["manage.py", "check"], ["-c", "import jobsite.wsgi"]):
        result = run_django(env, *command)
        assert result.returncode != 0
        assert "ImproperlyConfigured: SECRET_KEY" in result.stderr
        assert "set SECRET_KEY to a long random value" in result.stderr


@pytest.mark.parametrize("key", [None, "x"])
def test_makemigrations_needs_no_key_and_every_other_command_says_why_it_stops(key):
    """Writing migrations signs nothing: a deployment's tooling checks models against migrations
    without its secret. Any other command stops on the settings' own words, not on Django's
    "Models aren't loaded yet", which its utility shows when a settings error is swallowed."""
    env = environment(**PRODUCTION, SECRET_KEY=key)
    checked = run_django(env, "manage.py", "makemigrations", "--check", "--dry-run")
    assert checked.returncode == 0, checked.stderr
    assert "No changes detected" in checked.stdout
    migrated = run_django(env, "manage.py", "migrate", "--check")
    assert migrated.returncode != 0
    assert migrated.stderr.startswith("manage.py: ImproperlyConfigured: SECRET_KEY"), migrated.stderr
    assert "AppRegistryNotReady" not in migrated.stderr


def test_with_debug_on_the_development_key_works_and_check_deploy_names_it():
    env = environment(DEBUG="1", SECRET_KEY=None, HTTPS=None)
    result = run_django(env, "manage.py", "check", "--deploy")
    assert result.returncode == 0, result.stderr
    assert "security.W009" in result.stderr + result.stdout  # the key's django-insecure- prefix


DATABASE_OPTIONS = """
import json, sys
if sys.argv[1] == "web":
    import jobsite.wsgi  # what gunicorn loads
else:
    import django; django.setup()  # what manage.py runworkers does
from django.conf import settings
options = settings.DATABASES["default"]["OPTIONS"]
print(json.dumps({name: options[name] for name in ("connect_timeout", "tcp_user_timeout", "keepalives")}))
"""


def test_a_web_process_gives_up_on_a_cut_database_within_two_seconds_and_a_worker_within_its_margin():
    """A web host cut off from PostgreSQL held each request 4-15 s before its 503 (the workers'
    10 s TCP user timeout plus a 5 s connect): the web has timeouts of its own."""
    env = environment(**PRODUCTION, SECRET_KEY=secrets.token_urlsafe(50), JOBSITE_PROCESS=None,
                      DATABASE_URL="postgresql://jobs@db.example.com:5432/jobs", JOBS_LEASE_SECONDS="30")
    seen = {}
    for role in ("web", "worker"):
        result = run_django(env, "-c", DATABASE_OPTIONS, role)
        assert result.returncode == 0, result.stderr
        seen[role] = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["web"] == {"connect_timeout": 2, "tcp_user_timeout": 500, "keepalives": 1}  # 2 s: libpq's least
    assert seen["worker"] == {"connect_timeout": 5, "tcp_user_timeout": 10_000, "keepalives": 1}  # lease / 3


SILENT_DATABASE_REQUEST = """
import json, time
import jobsite.wsgi
from django.test import Client
started = time.monotonic()
response = Client().get("/jobs", HTTP_AUTHORIZATION="Bearer jq_" + "x" * 43, HTTP_ACCEPT="application/json")
print(json.dumps([response.status_code, response.get("Retry-After"), time.monotonic() - started]))
"""


def test_a_web_process_whose_database_never_answers_says_503_within_about_two_seconds():
    """A database host that takes the connection and then says nothing, as a cut-off one does."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    try:
        env = environment(DEBUG="0", SECRET_KEY=secrets.token_urlsafe(50), HTTPS=None, JOBSITE_PROCESS=None,
                          ALLOWED_HOSTS="testserver", DATABASE_URL=f"postgresql://jobs@127.0.0.1:{port}/jobs")
        result = run_django(env, "-c", SILENT_DATABASE_REQUEST)
    finally:
        silent.close()
    assert result.returncode == 0, result.stderr
    status, retry_after, seconds = json.loads(result.stdout.strip().splitlines()[-1])
    assert status == 503 and retry_after, result.stdout
    assert seconds < 3.5, seconds  # the workers' settings took 5 s to give up on the connect alone


PROBE = r"""
import json
import django
django.setup()
from django.test import Client
from accounts.members import create_member

create_member(username="alice", tenant_slug="acme", password="alice-pass-123")  # hashed as in production
client = Client(HTTP_HOST="jobs.example.com")
plain = client.get("/accounts/login/", HTTP_ACCEPT="text/html")
page = client.get("/accounts/login/", HTTP_ACCEPT="text/html", HTTP_X_FORWARDED_PROTO="https")
login = client.post("/accounts/login/", {"username": "alice", "password": "alice-pass-123"},
                    HTTP_X_FORWARDED_PROTO="https")

def cookie(response, name):
    morsel = response.cookies.get(name)
    return None if morsel is None else {"secure": bool(morsel["secure"]), "httponly": bool(morsel["httponly"])}

print(json.dumps({
    "plain": [plain.status_code, plain.headers.get("Location")],
    "page": [page.status_code, dict(page.headers)],
    "csrf_cookie": cookie(page, "csrftoken"),
    "login": [login.status_code, login.headers.get("Location")],
    "session_cookie": cookie(login, "sessionid"),
}))
"""


@pytest.mark.django_db(transaction=True)
def test_production_responses_carry_hsts_csp_and_secure_cookies():
    env = child_env(**PRODUCTION, SECRET_KEY=secrets.token_urlsafe(50))
    result = run_django(env, "-c", PROBE)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])

    assert seen["plain"] == [301, "https://jobs.example.com/accounts/login/"]
    status, headers = seen["page"]
    assert status == 200
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    csp = dict(d.strip().split(" ", 1) for d in headers["Content-Security-Policy"].split(";"))
    assert csp["default-src"] == csp["script-src"] == csp["style-src"] == "'self'"
    assert csp["frame-ancestors"] == csp["object-src"] == csp["base-uri"] == "'none'"
    assert {"camera=()", "microphone=()", "geolocation=()", "payment=()"} <= set(
        headers["Permissions-Policy"].split(", "))
    assert seen["csrf_cookie"]["secure"]
    assert seen["login"] == [302, "/jobs"]  # a member lands on their jobs list
    assert seen["session_cookie"] == {"secure": True, "httponly": True}


INLINE = [
    (re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I), "an inline <script>"),
    (re.compile(r"<style\b", re.I), "a <style> element"),
    (re.compile(r"\sstyle\s*=", re.I), "a style= attribute"),
    (re.compile(r"\son[a-z]+\s*=", re.I), "an on*= handler attribute"),
    (re.compile(r"\shx-on[:-]", re.I), "an hx-on handler (eval)"),
    (re.compile(r"\bjavascript:", re.I), "a javascript: URL"),
    (re.compile(r"\bhx-vals\s*=\s*['\"]\s*js:", re.I), "hx-vals with js: (eval)"),
]


def test_templates_carry_nothing_the_content_security_policy_refuses():
    """The CSP allows scripts and styles from static files only: inline ones would silently not run."""
    found = []
    for path in sorted([*(ROOT / "templates").rglob("*.html"), *ROOT.glob("*/templates/**/*.html")]):
        text = path.read_text()
        for pattern, what in INLINE:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not found, "move these to files under static/:\n" + "\n".join(found)
