import sys

from django.core.management.base import BaseCommand, CommandError

from jobs import tokens
from jobs.models import User


class Command(BaseCommand):
    help = "Print a new API token for USERNAME, once, alone on standard output. Only its hash is kept."

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username, **options):
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        if user.tenant_id is None:
            raise CommandError(f"{username!r} belongs to no tenant; create members with createmember")
        token = tokens.issue(user)
        sys.stderr.write("Use it as 'Authorization: Bearer <token>'. It is shown only this once.\n")
        self.stdout.write(token)
