"""The mixed-load benchmark runs the production stack on loopback and prints every figure it promises."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from bench import loadbench
from tests.conftest import PYTHON, ROOT
from tests.deploy.nginx import NGINX

pytestmark = [pytest.mark.nginx, pytest.mark.slow]


def test_a_short_loadbench_on_sqlite_reviews_uploads_behind_nginx_and_reports_each_figure():
    if not os.access(NGINX, os.X_OK):
        if os.environ.get("REQUIRE_NGINX") == "1":
            pytest.fail("REQUIRE_NGINX=1 but nginx is not installed", pytrace=False)
        pytest.skip("SKIPPED loadbench smoke run: no nginx (apt-get install nginx)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "DOCUMENTS_"))}
    done = subprocess.run(
        [PYTHON, "manage.py", "loadbench", "--minutes", "0.08", "--per-minute", "40", "--pollers", "4",
         "--warm-ups", "1", "--only", "text", "einvoice", "--gunicorn-workers", "2", "--postgres", "", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=180, env={**env, "DEBUG": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "| document | reviews | p50 | p95 | p99 |" in out and "Where a review's time goes" in out
    assert "pollers p99 < 50 ms:" in out
    report = json.loads(out[out.index("\n[") + 1:])[0]
    assert report["store"] == "SQLite" and report["uploads"] >= 2 and not report["refused"]
    reviews = report["reviews"]
    assert reviews["latency"]["all"]["reviews"] == report["uploads"], reviews["states"]  # every upload reviewed
    assert report["polls"]["first"]["requests"] > 0 and report["polls"]["second"]["requests"] > 0
    assert report["poll_failures"] == 0 and report["page_failures"] == 0
    assert report["memory"]["web"]["total_mb"] > 0 and report["memory"]["workers"]["total_mb"] > 0
    assert report["cpu_ms_per_request"]["web"] > 0 and report["cpu_ms_per_request"]["nginx"] is not None
    spent = next(iter(report["reviews"]["spent"].values()))
    assert set(spent) >= {"queue wait", "reading", "OCR", "fields", "note and writes"}


def test_review_read_spans_are_read_from_the_workers_log(tmp_path):
    log = tmp_path / "workers.log"
    log.write_text("event=claimed job=7\n"
                   "event=review_read job=7 media_type=application/pdf pages=1 ocr_pages=1 fetch_ms=2 read_ms=30 "
                   "ocr_ms=900 images_ms=40\nevent=review_read job=x\n")
    assert loadbench.read_spans(log) == {7: {"fetch": 0.002, "read": 0.03, "ocr": 0.9, "images": 0.04}}
