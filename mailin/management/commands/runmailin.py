import threading
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, close_old_connections

from jobs.clock import queue_clock
from jobs.worker.supervisor import stop_signals
from mailin.conf import mailin_settings
from mailin.fetch import queue_fetch, schedule


class Command(BaseCommand):
    help = ("Queue a fetch of the inbound mailbox every MAILIN_EVERY_SECONDS (the workers run it: "
            "runworkers). --once queues one and exits. SIGTERM/SIGINT: exit 0.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="queue one fetch now, then exit")

    def handle(self, *args: Any, **options: Any) -> None:
        conf = mailin_settings()
        if not conf.enabled:
            raise CommandError("inbound e-mail is off: set MAILIN_IMAP_HOST, MAILIN_IMAP_USER and "
                               "MAILIN_IMAP_PASSWORD (docs/operations.md)")
        if options["once"]:
            now = queue_clock.now()
            job = queue_fetch(now=now, key=f"once:{now.isoformat()}")
            self.stdout.write(f"queued fetch job {job.pk}" if job else "a fetch is already waiting or running")
            return
        stop = threading.Event()
        with stop_signals(lambda signum: stop.set()):
            self.stdout.write(f"runmailin: a fetch of {conf.user}@{conf.host} every {conf.every_seconds:g} s")
            while not stop.is_set():
                close_old_connections()
                started = time.monotonic()
                try:
                    schedule(now=queue_clock.now())
                except DatabaseError as exc:  # the database away: the next interval tries again
                    self.stderr.write(f"runmailin: could not queue a fetch: {type(exc).__name__}")
                stop.wait(max(0.0, conf.every_seconds - (time.monotonic() - started)))
