#!/usr/bin/env python3
"""Load the web API under gunicorn on loopback: requests/s and latency of the two endpoints.

    .venv/bin/python bench/web_load.py                       # SQLite (a fresh file in var/)
    .venv/bin/python bench/web_load.py --database-url postgresql://postgres@127.0.0.1:5432/bench_web

1. A fresh database (the PostgreSQL one is dropped and re-created), migrated, with one member
   and an API token.
2. gunicorn (sync workers) serving ``jobsite.wsgi`` on 127.0.0.1.
3. ``wrk`` (apt-get install wrk) for the throughput of ``GET /jobs/<id>`` and of ``POST /jobs``
   (each POST carries a new Idempotency-Key, so each commits a row).
4. 100 clients (threads) that each poll ``GET /jobs/<id>`` once a second: p50/p99/max.

No worker runs: the figures are the web tier and the store alone. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv").exists() else sys.executable
GUNICORN = str(Path(PYTHON).with_name("gunicorn"))

POST_LUA = """
local counter = 0
local tid = 0
function setup(thread) tid = tid + 1; thread:set("tid", tid) end
request = function()
  counter = counter + 1
  local key = string.format("bench-%s-%d-%d", tostring(tid), counter, math.random(1, 1000000000))
  return wrk.format("POST", "/jobs", {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer __TOKEN__",
    ["Idempotency-Key"] = key,
  }, '{"kind": "diagnostic.noop", "payload": {}}')
end
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def fresh_database(url: str) -> None:
    if url.startswith("sqlite"):
        path = Path(url.removeprefix("sqlite:///"))
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        return
    import psycopg

    base, _, name = url.rpartition("/")
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


def manage(env: dict[str, str], *args: str) -> str:
    return subprocess.run([PYTHON, str(ROOT / "manage.py"), *args], env=env, cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()


def wait_until_up(port: int, timeout: float = 20) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("gunicorn did not start")


def request(port: int, method: str, path: str, token: str, *, body: dict[str, Any] | None = None,
            key: str = "") -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if body is not None:
        headers.update({"Content-Type": "application/json", "Idempotency-Key": key})
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = conn.getresponse()
    data = json.loads(response.read() or b"{}")
    conn.close()
    return response.status, data


def wrk(url: str, *, duration: int, connections: int, threads: int, headers: list[str],
        script: str | None = None) -> dict[str, Any]:
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency"]
    for h in headers:
        cmd += ["-H", h]
    if script:
        cmd += ["-s", script]
    out = subprocess.run([*cmd, url], capture_output=True, text=True, check=True).stdout
    found = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if found is None:
        raise RuntimeError(f"wrk printed no request rate: {out[-500:]}")
    rps = float(found.group(1))
    lat = dict(re.findall(r"^\s+(50|99)%\s+(\S+)", out, re.M))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": lat.get("50"), "p99": lat.get("99"), "non2xx": int(errors.group(1)) if errors else 0}


def pollers(port: int, path: str, token: str, *, clients: int, duration: float) -> dict[str, Any]:
    """``clients`` threads, each GETting ``path`` once a second (staggered), on keep-alive connections."""
    latencies: list[float] = []
    failures = [0]
    lock = threading.Lock()
    start = time.monotonic() + 1.0
    stop = start + duration

    def run(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        tick = start + i / clients
        while tick < stop:
            time.sleep(max(tick - time.monotonic(), 0))
            t0 = time.perf_counter()
            try:
                conn.request("GET", path, headers=headers)
                response = conn.getresponse()
                response.read()
                ok = response.status == 200
            except OSError:
                conn.close()
                ok = False
            elapsed = time.perf_counter() - t0
            with lock:
                (latencies.append(elapsed) if ok else None)
                failures[0] += 0 if ok else 1
            tick += 1.0
        conn.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    latencies.sort()
    def pick(q: float) -> float:
        return latencies[min(int(q * len(latencies)), len(latencies) - 1)] * 1000

    return {"requests": len(latencies), "failures": failures[0], "p50_ms": pick(0.50), "p99_ms": pick(0.99),
            "max_ms": latencies[-1] * 1000, "mean_ms": statistics.mean(latencies) * 1000}


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=f"sqlite:///{ROOT / 'var' / 'bench-web.sqlite3'}")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers")
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections")
    parser.add_argument("--pollers", type=int, default=100)
    parser.add_argument("--poll-seconds", type=float, default=30)
    return parser.parse_args()


def report(args: argparse.Namespace, *, get: dict[str, Any], post: dict[str, Any], polled: dict[str, Any]) -> None:
    """The figures as a Markdown table, with what they were measured on."""
    store = "SQLite" if args.database_url.startswith("sqlite") else "PostgreSQL"
    print(f"\n{store}, gunicorn {args.workers} sync workers, wrk -c{args.connections} -d{args.duration}s, "
          f"{os.cpu_count()} CPUs shared by server, database and load tool\n")
    print("| endpoint | requests/s | p50 | p99 | non-2xx |")
    print("|---|---|---|---|---|")
    print(f"| GET /jobs/<id> | {get['rps']:.0f} | {get['p50']} | {get['p99']} | {get['non2xx']} |")
    print(f"| POST /jobs (new key each) | {post['rps']:.0f} | {post['p50']} | {post['p99']} | {post['non2xx']} |")
    print(f"\n{args.pollers} clients polling GET /jobs/<id> once a second for {args.poll_seconds:.0f} s: "
          f"{polled['requests']} requests, {polled['failures']} failed, p50 {polled['p50_ms']:.1f} ms, "
          f"p99 {polled['p99_ms']:.1f} ms, max {polled['max_ms']:.1f} ms")



def main() -> None:
    args = arguments()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed: apt-get install wrk")

    env = dict(os.environ, DATABASE_URL=args.database_url, JOBS_DIAGNOSTIC_KINDS="1",
               DJANGO_SETTINGS_MODULE="jobsite.settings",
               SECRET_KEY=secrets.token_urlsafe(50),  # a throwaway site on loopback
               DEBUG="0", JOBS_LOG_LEVEL="WARNING", PYTHONPATH=str(ROOT))
    fresh_database(args.database_url)
    manage(env, "migrate", "--noinput")
    manage(env, "createmember", "bench", "--tenant", "bench", "--password", "bench-password-1")
    token = manage(env, "createtoken", "bench").splitlines()[-1]

    port = free_port()
    server = subprocess.Popen(
        [GUNICORN, "jobsite.wsgi:application", "--workers", str(args.workers), "--bind", f"127.0.0.1:{port}",
         "--log-level", "warning"],
        cwd=ROOT, env=env, start_new_session=True,
    )
    try:
        wait_until_up(port)
        status, body = request(port, "POST", "/jobs", token, body={"kind": "diagnostic.noop", "payload": {}},
                               key="first")
        if status != 202:
            raise RuntimeError(f"the first submission answered {status}: {body}")
        job_path = body["status_url"]
        url = f"http://127.0.0.1:{port}"
        auth = [f"Authorization: Bearer {token}", "Accept: application/json"]
        threads = min(2, args.connections)
        get = wrk(url + job_path, duration=args.duration, connections=args.connections, threads=threads, headers=auth)
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
            f.write(POST_LUA.replace("__TOKEN__", token))
        post = wrk(url + "/jobs", duration=args.duration, connections=args.connections, threads=threads, headers=[],
                   script=f.name)
        os.unlink(f.name)
        polled = pollers(port, job_path, token, clients=args.pollers, duration=args.poll_seconds)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)

    report(args, get=get, post=post, polled=polled)


if __name__ == "__main__":
    main()
