import os
from datetime import timedelta
from typing import Any

from django.core import checks
from django.core.management.base import BaseCommand, CommandError, CommandParser

from jobs.conf import queue_settings
from jobs.worker.supervisor import Supervisor, stop_signals


def positive(value: str) -> float:
    number = float(value)
    if not number > 0:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Run N supervised worker processes. SIGTERM/SIGINT: stop claiming, finish or give back "
        "the current jobs within --grace seconds, exit 0; a second signal exits at once."
    )
    # The checks of what a worker uses: models, database, caches, signals... not the URLconf, the
    # admin, templates or static files, which only the web serves (checking the URLconf imports
    # every view: half a second of each worker host's start, and of each test that starts one).
    requires_system_checks = [
        checks.Tags.models, checks.Tags.database, checks.Tags.caches, checks.Tags.signals,
        checks.Tags.compatibility, checks.Tags.async_support, checks.Tags.files, checks.Tags.translation,
    ]

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                            help="worker processes to run (default: the number of CPUs)")
        parser.add_argument("--burst", action="store_true",
                            help="drain the eligible jobs, then exit 0")
        parser.add_argument("--lease", type=positive, default=queue_settings().lease.total_seconds(),
                            help="seconds a claim holds before it must be renewed (renewed every lease/3)")
        parser.add_argument("--poll-interval", type=positive, default=1.0,
                            help="longest wait of an idle worker between claims (backoff cap), seconds")
        parser.add_argument("--prefetch", type=int, default=queue_settings().prefetch,
                            help="most jobs a worker claims in one transaction; it claims as many as it "
                                 "finishes within JOBS_PREFETCH_WINDOW seconds (1: one at a time)")
        parser.add_argument("--completion-batch", type=int, default=queue_settings().completion_batch,
                            help="most completions committed in one transaction, none held back longer than "
                                 "JOBS_COMPLETION_FLUSH_MS (1: each at once)")
        parser.add_argument("--grace", type=float, default=20.0,
                            help="seconds a running job may take to finish after SIGTERM before it is given back")

    def handle(self, *args: Any, processes: int, burst: bool, lease: float, poll_interval: float, grace: float,
               prefetch: int, completion_batch: int, **options: Any) -> None:
        if processes < 1:
            raise CommandError("--processes must be at least 1")
        if prefetch < 1 or completion_batch < 1:
            raise CommandError("--prefetch and --completion-batch must be at least 1")
        if grace < 0:
            raise CommandError("--grace must not be negative")
        supervisor = Supervisor(
            processes=processes,
            worker_options={"lease": timedelta(seconds=lease), "poll_interval": poll_interval, "burst": burst,
                            "prefetch": prefetch, "completion_batch": completion_batch},
            grace=grace,
            burst=burst,
        )
        with stop_signals(supervisor.on_signal):
            code = supervisor.run()
        if code:
            raise CommandError(f"workers exited with status {code}", returncode=code)
