"""gunicorn behind the nginx of deploy/, on loopback, with the production settings.

The shipped deploy/nginx/jobsite.conf runs as it is, with only its ports, paths and TLS
certificate substituted, in a private nginx (its own prefix, temporary folders, pid and
logs): the system's nginx is never started or touched. gunicorn runs with
deploy/gunicorn.conf.py and three sync workers, as many as the slow clients.

Skipped, with the reason printed, when nginx or openssl is missing; ``REQUIRE_NGINX=1``
(as in CI) turns that into a failure.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import PYTHON, ROOT
from tests.deploy.nginx import NGINX, nginx_config

pytestmark = [pytest.mark.nginx, pytest.mark.slow]

SLOW_BODY = 100 * 1024  # what each slow client declares; it sends one byte of it


def _missing(reason: str):
    if os.environ.get("REQUIRE_NGINX") == "1":
        pytest.fail(f"REQUIRE_NGINX=1 but {reason}", pytrace=False)
    pytest.skip(f"SKIPPED nginx deployment test: {reason}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout: float, what: str, proc: subprocess.Popen | None = None, log: Path | None = None):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            detail = log.read_text() if log and log.exists() else ""
            raise AssertionError(f"{what}: the process exited with {proc.returncode}\n{detail}")
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout} s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


def _tls() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # a self-signed certificate made for this run
    return context


def request(port: int, method: str, path: str, *, tls: bool = True, headers: dict | None = None,
            body: bytes | None = None, timeout: float = 10.0):
    """One request on a new connection: (status, headers, body bytes, seconds taken)."""
    started = time.monotonic()
    if tls:
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=_tls())
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
        return response.status, response.headers, data, time.monotonic() - started
    finally:
        conn.close()


def open_slow_client(port: int, *, tls: bool) -> socket.socket:
    """A login POST that declares a 100 KB form body, sends one byte of it and holds on."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    if tls:
        sock = _tls().wrap_socket(sock, server_hostname="localhost")
    sock.sendall(
        b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        # Origin and a CSRF cookie pass Django's first CSRF checks, so it goes on to read the form.
        b"Origin: https://127.0.0.1\r\nX-Forwarded-Proto: https\r\nCookie: csrftoken=" + b"c" * 32 + b"\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n"
        + f"Content-Length: {SLOW_BODY}\r\n\r\n".encode() + b"u"
    )
    return sock


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def start_nginx(workdir: Path, upstream_port: int, cert: Path, key: Path):
    workdir.mkdir(parents=True, exist_ok=True)
    http_port, https_port = free_port(), free_port()
    conf = nginx_config(workdir, upstream_port=upstream_port, http_port=http_port, https_port=https_port,
                        cert=cert, key=key)
    log = workdir / "error.log"
    test = subprocess.run([NGINX, "-t", "-p", str(workdir), "-c", str(conf), "-e", str(log)],
                          capture_output=True, text=True, timeout=30)
    assert test.returncode == 0, test.stderr
    proc = subprocess.Popen([NGINX, "-p", str(workdir), "-c", str(conf), "-e", str(log), "-g", "daemon off;"],
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: _listening(https_port) and _listening(http_port), 15, "nginx listening", proc, log)
    return proc, http_port, https_port


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    if not os.access(NGINX, os.X_OK):
        _missing(f"no nginx at {NGINX} (apt-get install nginx)")
    openssl = shutil.which("openssl")
    if not openssl:
        _missing("no openssl to make a test certificate (apt-get install openssl)")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=30)
    return cert, key


@pytest.fixture(scope="module")
def site_env(tmp_path_factory) -> dict[str, str]:
    """The production environment (HTTPS=1) of the site gunicorn serves, on its own SQLite file."""
    folder = tmp_path_factory.mktemp("site")
    env = dict(os.environ, DEBUG="0", HTTPS="1", SECRET_KEY=secrets.token_urlsafe(50),
               ALLOWED_HOSTS="127.0.0.1,localhost", DATABASE_URL=f"sqlite:///{folder / 'site.sqlite3'}",
               JOBSITE_VAR_DIR=str(folder / "var"), DJANGO_SETTINGS_MODULE="jobsite.settings", PYTHONPATH=str(ROOT))
    env.pop("GUNICORN_CMD_ARGS", None)
    return env


@pytest.fixture(scope="module")
def gunicorn(certificate, site_env, tmp_path_factory):
    """gunicorn with deploy/gunicorn.conf.py and the production environment (HTTPS=1)."""
    folder = tmp_path_factory.mktemp("gunicorn")
    port = free_port()
    env = site_env
    log = folder / "gunicorn.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [PYTHON, "-m", "gunicorn", "-c", str(ROOT / "deploy" / "gunicorn.conf.py"), "--bind", f"127.0.0.1:{port}",
             "--workers", "3", "jobsite.wsgi:application"],
            cwd=ROOT, env=env, start_new_session=True, stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        def up() -> bool:
            try:
                return request(port, "GET", "/accounts/login/", tls=False, timeout=2)[0] in {200, 301}
            except OSError:
                return False

        wait_until(up, 30, "gunicorn answering", proc, log)
        yield port
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def stack(gunicorn, certificate, tmp_path_factory):
    proc, http_port, https_port = start_nginx(tmp_path_factory.mktemp("nginx"), gunicorn, *certificate)
    try:
        yield {"gunicorn": gunicorn, "http": http_port, "https": https_port}
    finally:
        stop(proc)


def login_page_seconds(port: int) -> float:
    status, _, body, seconds = request(port, "GET", "/accounts/login/", headers={"Accept": "text/html"})
    assert status == 200 and b"Log in" in body
    return seconds


def test_three_slow_bodies_hold_nginx_connections_not_the_gunicorn_workers(stack):
    alone = sorted(login_page_seconds(stack["https"]) for _ in range(5))[2]  # the median, workers warmed up
    slow = [open_slow_client(stack["https"], tls=True) for _ in range(3)]
    try:
        time.sleep(0.3)  # let nginx take them all in
        beside = login_page_seconds(stack["https"])
        print(f"GET through nginx: {alone * 1000:.0f} ms alone, {beside * 1000:.0f} ms beside three slow bodies")
        assert beside < alone + 1.0, f"a normal GET waited {beside:.2f} s behind three slow bodies"
        for sock in slow:  # still waiting for their bodies: nothing was answered or dropped
            sock.setblocking(False)
            with pytest.raises((BlockingIOError, ssl.SSLWantReadError)):
                sock.recv(1)
    finally:
        for sock in slow:
            sock.close()


def test_a_body_over_the_limit_gets_the_products_json_413_and_browsers_a_page(stack):
    too_big = 111 * 1024 * 1024  # over client_max_body_size (110m): the browser's form sends up to 20 documents
    for headers, kind in (({"Authorization": "Bearer x", "Accept": "application/json"}, "json"),
                          ({"Accept": "*/*"}, "json"),
                          ({"Accept": "text/html,application/xhtml+xml"}, "html"),
                          ({"Accept": "text/html", "HX-Request": "true"}, "html")):
        conn = http.client.HTTPSConnection("127.0.0.1", stack["https"], timeout=10, context=_tls())
        try:
            # The declared length alone is refused: the body is never sent.
            conn.putrequest("POST", "/jobs")
            for name, value in {**headers, "Content-Type": "application/json", "Content-Length": str(too_big)}.items():
                conn.putheader(name, value)
            conn.endheaders()
            response = conn.getresponse()
            body = response.read()
        finally:
            conn.close()
        assert response.status == 413
        if kind == "json":
            assert response.headers["Content-Type"].startswith("application/json")
            assert json.loads(body) == {
                "error": "too_large",
                "detail": "the request body is larger than this site accepts (110 MB); nothing was accepted",
            }
        else:
            assert response.headers["Content-Type"].startswith("text/html")
            assert b"larger than the site accepts" in body and b"<a href=\"/jobs/new\">" in body


def test_production_headers_come_through_and_plain_http_is_redirected(stack):
    status, headers, _, _ = request(stack["https"], "GET", "/accounts/login/", headers={"Accept": "text/html"})
    assert status == 200
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert "camera=()" in headers["Permissions-Policy"] and "geolocation=()" in headers["Permissions-Policy"]
    cookie = headers["Set-Cookie"]
    assert cookie.startswith("csrftoken=") and "Secure" in cookie

    status, headers, _, _ = request(stack["http"], "GET", "/jobs?state=queued", tls=False)
    assert status == 301
    assert headers["Location"] == "https://127.0.0.1/jobs?state=queued"


def test_nginx_answers_json_502_when_gunicorn_is_not_running(certificate, tmp_path):
    proc, _, https_port = start_nginx(tmp_path / "nginx", free_port(), *certificate)  # nothing listens upstream
    try:
        status, headers, body, _ = request(https_port, "GET", "/jobs/1", headers={"Authorization": "Bearer x"})
        assert status == 502
        assert headers["Content-Type"].startswith("application/json")
        assert headers["Retry-After"] == "2"
        assert json.loads(body)["error"] == "bad_gateway"

        status, headers, body, _ = request(https_port, "GET", "/jobs", headers={"Accept": "text/html"})
        assert status == 502 and headers["Content-Type"].startswith("text/html")
        assert headers["Content-Security-Policy"] == "default-src 'none'"
        assert b"Briefly unavailable" in body
    finally:
        stop(proc)


def test_the_same_slow_bodies_sent_straight_to_gunicorn_hold_every_worker(stack):
    """What nginx prevents: without it, the three slow clients occupy the three sync workers."""
    port = stack["gunicorn"]
    slow = [open_slow_client(port, tls=False) for _ in range(3)]
    try:
        time.sleep(0.3)
        with pytest.raises((TimeoutError, socket.timeout)):
            request(port, "GET", "/accounts/login/", tls=False, headers={"X-Forwarded-Proto": "https"}, timeout=3)
    finally:
        for sock in slow:
            sock.close()

    def answers() -> bool:  # the workers come back once the slow clients hang up
        try:
            return request(port, "GET", "/accounts/login/", tls=False, timeout=2,
                           headers={"X-Forwarded-Proto": "https"})[0] == 200
        except OSError:
            return False

    wait_until(answers, 40, "gunicorn free again")


@pytest.fixture(scope="module")
def api_token(site_env) -> str:
    """A member's API token on the site's database (migrated here: the GETs above need none)."""
    def manage(*args: str) -> str:
        done = subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=site_env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip()

    manage("migrate", "-v0")
    manage("createmember", "alice", "--tenant", "acme")
    return manage("createtoken", "alice").splitlines()[-1]


def multipart(fields: dict[str, str], name: str, content: bytes) -> tuple[bytes, str]:
    boundary = secrets.token_hex(16)
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
             for key, value in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="document"; filename="{name}"\r\n'
                 f"Content-Type: application/pdf\r\n\r\n".encode() + content + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def test_three_uploads_of_a_pdf_to_rebuild_at_once_do_not_hold_the_web(stack, api_token):
    """The 5 MB PDF whose cross-reference table pypdf would rebuild from 243,000 object markers
    (28 s per upload behind nginx, a GET waiting 27.9 s, before): refused at once, with its code."""
    import threading

    from tests.hostile import pdf_to_rebuild

    alone = sorted(login_page_seconds(stack["https"]) for _ in range(5))[2]
    document = pdf_to_rebuild()
    answers: list[tuple[int, bytes, float]] = []

    def upload(n: int) -> None:
        body, content_type = multipart({"kind": "document_review", "idempotency_key": f"rebuild-{n}"},
                                       "invoice.pdf", document)
        status, _, data, seconds = request(stack["https"], "POST", "/jobs", body=body, timeout=60, headers={
            "Authorization": f"Bearer {api_token}", "Content-Type": content_type, "Accept": "application/json"})
        answers.append((status, data, seconds))

    uploads = [threading.Thread(target=upload, args=(n,)) for n in range(3)]
    for thread in uploads:
        thread.start()
    beside = login_page_seconds(stack["https"])
    for thread in uploads:
        thread.join(60)
    print(f"\nGET through nginx: {alone * 1000:.0f} ms alone, {beside * 1000:.0f} ms beside three uploads of the "
          f"PDF to rebuild; the uploads answered in {', '.join(f'{a[2]:.2f}' for a in answers)} s")
    assert beside < alone + 1.0, f"a normal GET waited {beside:.2f} s behind three hostile uploads"
    assert len(answers) == 3
    for status, data, seconds in answers:
        assert status == 413 and json.loads(data)["error"] == "too_complex", data[:300]
        assert seconds < 5


SLEEPY_APP = """
import time

def application(environ, start_response):
    time.sleep(30)
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"too late"]
"""


def test_a_worker_killed_for_its_timeout_gives_the_products_page_not_gunicorns(certificate, tmp_path):
    """deploy/gunicorn.conf.py's worker_abort: the killed worker answers nothing, nginx answers for it."""
    (tmp_path / "sleepy.py").write_text(SLEEPY_APP)
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    env.pop("GUNICORN_CMD_ARGS", None)
    log = tmp_path / "gunicorn.log"
    with log.open("w") as out:
        app = subprocess.Popen([PYTHON, "-m", "gunicorn", "-c", str(ROOT / "deploy" / "gunicorn.conf.py"), "--bind",
                                f"127.0.0.1:{port}", "--workers", "1", "--timeout", "1", "sleepy:application"],
                               cwd=tmp_path, env=env, start_new_session=True, stdout=out, stderr=subprocess.STDOUT)
    proc = None
    try:
        wait_until(lambda: _listening(port), 30, "gunicorn listening", app, log)
        proc, _, https_port = start_nginx(tmp_path / "nginx", port, *certificate)
        status, headers, body, seconds = request(https_port, "GET", "/jobs", headers={"Accept": "text/html"},
                                                 timeout=20)
        assert status == 502 and b"Briefly unavailable" in body and b"Internal Server Error" not in body
        assert headers["Content-Security-Policy"] == "default-src 'none'"
        status, headers, body, _ = request(https_port, "GET", "/jobs/1", headers={"Authorization": "Bearer x"},
                                           timeout=20)
        assert status == 502 and json.loads(body)["error"] == "bad_gateway"
        assert "WORKER TIMEOUT" in log.read_text()
        print(f"\na request past gunicorn's timeout (1 s here): nginx's 502 page after {seconds:.1f} s")
    finally:
        if proc is not None:
            stop(proc)
        stop(app)
