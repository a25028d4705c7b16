"""Acceptance in a separate process, as the web process runs it, with what it cost."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import PYTHON, child_env

PROBE = Path(__file__).with_name("acceptance_probe.py")
# Acceptance of a refused document may use this much memory above the process's resident
# size before it (the old reader peaked at 2.8 GB for the DOCX bomb), and this much time.
MEMORY_BOUND_MB = 150
TIME_BOUND_S = 5.0


def stored_files(media_root: Path) -> list[Path]:
    return [p for p in media_root.rglob("*") if p.is_file()] if media_root.exists() else []


def accept_in_a_child(document: bytes, user, tmp_path: Path, media_root: Path) -> dict:
    """Accept ``document`` in a separate process (as the web process would) and report its cost."""
    path = tmp_path / "upload.bin"
    path.write_bytes(document)
    done = subprocess.run(
        [PYTHON, str(PROBE), str(path), "--tenant-id", str(user.tenant_id), "--user-id", str(user.pk)],
        env=child_env(MEDIA_ROOT=str(media_root)), capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"\naccepting {len(document):,} bytes: {report['outcome'][:90]}; {report['seconds']} s, "
          f"peak {report['peak_mb'] - report['baseline_mb']:.0f} MB above {report['baseline_mb']:.0f} MB")
    return report
