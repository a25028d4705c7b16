"""gunicorn for the job site, behind the nginx of deploy/nginx/jobsite.conf.

    gunicorn -c deploy/gunicorn.conf.py jobsite.wsgi:application

Sync workers are safe here only because nginx reads each request body whole (and buffers
each response) before a worker is involved: a client that trickles its body, or never
finishes it, holds an nginx connection, which costs almost nothing, not one of the few
workers. Never let clients reach this port directly (it binds to loopback).
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
# Requests are short (acceptance is one transaction; status reads are two indexed
# queries), so CPU-bound: about two workers per core. Workers run no jobs (runworkers does).
workers = int(os.environ.get("GUNICORN_WORKERS", 2 * multiprocessing.cpu_count() + 1))
worker_class = "sync"
# A worker silent this long is killed and replaced. No request should come near it: a
# document's check is bounded at 3 s (documents.store.CHECK_WALL_SECONDS) and a form's batch
# of them at 15 s in all (web.submissions.BATCH_CHECK_SECONDS); see worker_abort below for the rest.
timeout = 30
graceful_timeout = 30  # on SIGTERM, requests in flight get this long to finish
max_requests = 2000    # recycle workers now and then, staggered, against slow leaks
max_requests_jitter = 200
# nginx on this host is the only client: trust its X-Forwarded-Proto (gunicorn's default
# too, stated here because the settings' BEHIND_PROXY relies on the same header).
forwarded_allow_ips = "127.0.0.1"
accesslog = "-"        # method, path, status and timing: never bodies or documents
errorlog = "-"


def worker_abort(worker):
    """A worker killed for its timeout exits without answering, so nginx serves the product's
    502 page (deploy/nginx/_errors/: JSON or HTML, as the client asked) instead of gunicorn's
    own bare "Internal Server Error", which it would otherwise write as it dies."""
    os._exit(1)
