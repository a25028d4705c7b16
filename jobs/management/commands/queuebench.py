import json

from django.core.management.base import BaseCommand, CommandError

from jobs import benchmark


class Command(BaseCommand):
    help = (
        "Benchmark the queue on throwaway SQLite files: the project's claim -> complete path "
        "against a bare sqlite3 loop of the same statements, at synchronous=FULL and NORMAL; "
        "one process against two; claim time at two queue depths. Prints the figures."
    )

    def add_arguments(self, parser):
        parser.add_argument("--jobs", type=int, default=5000, help="Jobs to drain per measurement.")
        parser.add_argument("--depths", default="1000,100000", help="Two queue depths for the claim time.")
        parser.add_argument("--rounds", type=int, default=2, help="Best of this many drains per setting.")
        parser.add_argument("--json", action="store_true", help="Also print the figures as JSON.")
        parser.add_argument("--role", choices=sorted(benchmark.ROLES), help="(internal) run one child role.")
        parser.add_argument("--role-args", default="{}", help="(internal) the role's arguments as JSON.")

    def handle(self, *args, jobs, depths, rounds, json: bool, role, role_args, **options):
        if role:
            result = benchmark.ROLES[role](**_loads(role_args))
            self.stdout.write(_dumps(result or {}))
            return
        try:
            small, large = (int(d) for d in depths.split(","))
        except ValueError:
            raise CommandError("--depths takes two numbers, e.g. 1000,100000") from None
        figures = benchmark.run(jobs=jobs, depths=(small, large), rounds=rounds, out=self.stdout.write)
        if json:
            self.stdout.write(_dumps(figures))


def _loads(text: str) -> dict:
    return json.loads(text)


def _dumps(value) -> str:
    return json.dumps(value)
