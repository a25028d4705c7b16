"""Accept one document as the web process does, and report what it cost: a child process.

    python tests/agent/acceptance_probe.py PATH --tenant-id N --user-id N

Run with the database in DATABASE_URL and the document store in MEDIA_ROOT. It calls
``jobs.queue.accept`` for a ``document_review`` job with the file as its upload, and prints
one JSON line: the outcome (``accepted <id>`` or ``refused <status> <code>: <message>``),
the seconds acceptance took, the resident memory just before it (``baseline_mb``) and the
peak resident memory during it (``peak_mb``: VmHWM, reset just before acceptance). A
separate process, so the peak is acceptance's own and not the test runner's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import sys
import time
from pathlib import Path


def status_mb(field: str) -> float:
    """A memory figure of this process from /proc/self/status (VmRSS now, VmHWM peak), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def reset_peak() -> None:
    """Start the peak (VmHWM) from the resident size now, so set-up does not count (Linux 4.0+)."""
    with contextlib.suppress(OSError):  # the peak then includes set-up: an overestimate, never an underestimate
        Path("/proc/self/clear_refs").write_text("5")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("document", type=Path)
    parser.add_argument("--tenant-id", type=int, required=True)
    parser.add_argument("--user-id", type=int, required=True)
    parser.add_argument("--key", default=f"probe-{os.getpid()}")
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobsite.settings")
    import django

    django.setup()
    from django.utils import timezone

    from documents import acceptance
    from documents.store import Upload
    from jobs import kinds
    from jobs.errors import AcceptanceError

    # A web process that has checked a document before: the reader is loaded (``kinds.warmed``),
    # so the peak is this document's, not the modules' a first check loads.
    review = kinds.get("document_review")
    assert review is not None
    kinds.warmed(review)
    upload = Upload(args.document.read_bytes(), args.document.name, "application/octet-stream")
    baseline = status_mb("VmRSS")
    reset_peak()
    started = time.perf_counter()
    try:
        job = acceptance.accept(scope_id=args.tenant_id, user_id=args.user_id, kind="document_review", payload={},
                                operation_key=args.key, now=timezone.now(), document=upload).job
        outcome = f"accepted {job.pk}"
    except AcceptanceError as exc:
        outcome = f"refused {exc.status} {exc.code}: {exc.message}"
    seconds = time.perf_counter() - started
    peak = status_mb("VmHWM")
    # getrusage's maxrss for comparison: on Linux it also counts the parent's size at fork.
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"outcome": outcome, "seconds": round(seconds, 3), "baseline_mb": round(baseline, 1),
                      "peak_mb": round(peak, 1), "ru_maxrss_mb": round(maxrss, 1),
                      "size": len(upload.content)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
