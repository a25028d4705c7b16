import sys

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts import tokens
from accounts.models import User
from jobs.clock import queue_clock


class Command(BaseCommand):
    help = "Print a new API token for USERNAME, once, alone on standard output. Only its hash is kept."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--expires", metavar="LIFETIME",
                            help="Let the token expire after this long, e.g. 90d or 12h (default: never).")

    def handle(self, *args: str, username: str, expires: str | None, **options: object) -> None:
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        if user.tenant_id is None:
            raise CommandError(f"{username!r} belongs to no tenant; create members with createmember")
        try:
            expires_at = queue_clock.now() + tokens.lifetime(expires) if expires else None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        token = tokens.issue(user, expires_at=expires_at)
        until = f" It expires at {expires_at:%Y-%m-%d %H:%M} UTC." if expires_at else ""
        sys.stderr.write(f"Use it as 'Authorization: Bearer <token>'. It is shown only this once.{until}\n")
        self.stdout.write(token)
