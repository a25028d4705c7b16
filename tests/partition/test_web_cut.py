"""A web host cut off from the database answers 503 at once and keeps serving what it can.

The deploy recipe (nginx in front of gunicorn with three sync workers, HTTPS=1) runs on a
host of its own, reaching the private PostgreSQL over the host's link; its clients come
from the host's loopback, as nginx's do. Each gunicorn worker holds a persistent
connection when the link is cut. Every request that needs the database must then answer
the product's 503 with ``Retry-After`` within 2 s (the web's own connect and TCP user
timeouts, jobsite/settings.py), not hold a sync worker for the workers' longer timeouts,
while the static files and the login page (no database) answer as usual. Once the link is
back, requests succeed again within seconds, with no restart.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.deploy.nginx import NGINX

from .conftest import FIGURES
from .harness import DBNAME, Answer, WebHost, wait_until

pytestmark = [pytest.mark.partition, pytest.mark.slow]

WEB_HOST = 2
GUNICORN_WORKERS = 3
ROUNDS = 6  # requests that need the database while the link is cut, one after another
BOUND = 2.0  # seconds each may take


@pytest.fixture
def web(site):
    if not shutil.which("openssl") or not os.access(NGINX, os.X_OK):
        if os.environ.get("REQUIRE_NGINX") == "1":
            pytest.fail("REQUIRE_NGINX=1 but nginx or openssl is missing", pytrace=False)
        pytest.skip("SKIPPED web host cut test: nginx or openssl is missing")
    host = WebHost(site.network, WEB_HOST, site.cluster, site.env, site.workdir, workers=GUNICORN_WORKERS)
    try:
        yield host
    finally:
        host.close()


def api_list(web: WebHost, token: str) -> Answer:
    """The API's job list: the token is looked up in the database."""
    return web.request("GET", "/jobs", headers={"Authorization": f"Bearer {token}", "Accept": "application/json"})


def login_page(web: WebHost) -> Answer:
    return web.request("GET", "/accounts/login/", headers={"Accept": "text/html"})


def login_post(web: WebHost, form: tuple[str, str]) -> Answer:
    """A browser's login with a wrong password (the credentials and the lockout are in the database)."""
    cookie, token = form
    body = f"username=nobody&password=wrong&csrfmiddlewaretoken={token}".encode()
    return web.request("POST", "/accounts/login/", body=body, headers={
        "Accept": "text/html", "Content-Type": "application/x-www-form-urlencoded", "Cookie": f"csrftoken={cookie}",
        "Origin": "https://127.0.0.1", "Referer": "https://127.0.0.1/accounts/login/"})


def login_form(web: WebHost) -> tuple[str, str]:
    """The CSRF cookie and the form's token, as a browser has them after loading the page."""
    page = login_page(web)
    assert page.status == 200
    cookie = re.search(r"csrftoken=([^;]+)", page.headers["set-cookie"])
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.body)
    assert cookie and token
    return cookie.group(1), token.group(1).decode()


def web_sessions(site) -> int:
    """Sessions the web host holds on the server now."""
    rows = site.rows("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = %s AND client_addr = %s",
                     (DBNAME, site.network.inside(WEB_HOST)))
    return rows[0]["n"]


def test_a_web_host_cut_off_from_the_database_answers_503_within_two_seconds_and_serves_the_rest(site, web):
    form = login_form(web)
    assert api_list(web, site.token).status == 200
    assert b"did not match" in login_post(web, form).body
    # Every worker holds a persistent connection, the case where a request pays for the
    # health check on the dead connection and then for a new connection's attempt.
    with ThreadPoolExecutor(GUNICORN_WORKERS * 2) as pool:
        def warm() -> int:
            list(pool.map(lambda _: api_list(web, site.token).status, range(GUNICORN_WORKERS * 2)))
            return web_sessions(site) >= GUNICORN_WORKERS
        wait_until(warm, 20, "every gunicorn worker to hold a database connection", every=0)
    static_before = web.request("GET", "/static/site.css")
    assert static_before.status == 200 and static_before.headers["content-type"].startswith("text/css")

    site.network.cut(WEB_HOST)
    needing, serving = [], []
    for n in range(ROUNDS):
        if n % 2 == 0:
            answer = api_list(web, site.token)
            assert answer.status == 503, answer
            assert answer.headers["content-type"].startswith("application/json")
            assert answer.json()["error"] == "unavailable"
        else:
            answer = login_post(web, form)
            assert answer.status == 503, answer
            assert answer.headers["content-type"].startswith("text/html") and b"Briefly unavailable" in answer.body
        assert answer.headers["retry-after"] == "2"
        needing.append(answer.seconds)
        static = web.request("GET", "/static/site.css")
        page = login_page(web)
        assert static.status == 200 and static.body == static_before.body
        assert page.status == 200 and b"<h1>Log in</h1>" in page.body
        serving += [static.seconds, page.seconds]

    # Many at once: each worker is held about a second per request, not for the driver's defaults.
    burst = GUNICORN_WORKERS * 3
    started = time.monotonic()
    with ThreadPoolExecutor(burst) as pool:
        answers = list(pool.map(lambda _: api_list(web, site.token), range(burst)))
    burst_seconds = time.monotonic() - started
    assert [a.status for a in answers] == [503] * burst

    healed_at = time.monotonic()
    site.network.heal(WEB_HOST)
    wait_until(lambda: api_list(web, site.token).status == 200, 15, "the web to reach the database again", every=0.1)
    back = time.monotonic() - healed_at
    assert b"did not match" in login_post(web, form).body

    print(f"cut: requests needing the database, s: {', '.join(f'{s:.2f}' for s in needing)}")
    print(f"cut: static file and login page, s: max {max(serving):.3f}")
    print(f"cut: {burst} at once on {GUNICORN_WORKERS} workers: {burst_seconds:.2f} s ({burst / burst_seconds:.1f}/s)")
    print(f"heal to the first 200: {back:.2f} s")
    FIGURES["web host cut: 503s needing the database, s"] = ", ".join(f"{s:.2f}" for s in needing)
    FIGURES["web host cut: static file and login page, max s"] = f"{max(serving):.3f}"
    FIGURES[f"web host cut: {burst} requests at once on {GUNICORN_WORKERS} workers, s"] = (
        f"{burst_seconds:.2f} ({burst / burst_seconds:.1f} answers/s)")
    FIGURES["web host cut: heal to the first 200, s"] = f"{back:.2f}"
    assert max(needing) < BOUND, f"a request held its worker {max(needing):.2f} s before its 503"
    assert max(serving) < 1.0
    assert back < 5
