"""``manage.py webhookscatchup [--minutes 60]``: queue the webhook deliveries a worker's death missed.

A review's deliveries are queued right after its completion commits; a worker that dies in
between leaves that review without them. The ``webhook.catchup`` job does this every few minutes
by itself (``agent.inbox.webhooks.run_catch_up``); this runs it once, by hand: it queues the missing
ones of the reviews completed within ``--minutes``, and none twice.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from agent.inbox import webhooks


class Command(BaseCommand):
    help = "Queue the webhook deliveries missing for reviews completed within the last minutes."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--minutes", type=float, default=60.0, help="how far back to look (default 60)")

    def handle(self, *args: Any, **options: Any) -> None:
        made = webhooks.catch_up(since=timedelta(minutes=options["minutes"]))
        self.stdout.write(f"{len(made)} webhook deliveries queued")
