import secrets

from django.core.management.base import BaseCommand

from jobs import members
from jobs.models import User

DEMO = [("alice", "acme", False), ("bob", "globex", False), ("staff", "acme", True)]


class Command(BaseCommand):
    help = "Create the demo tenants (acme, globex) and users (alice, bob, staff); print their passwords."

    def handle(self, *args: str, **options: object) -> None:
        self.stdout.write("Demo accounts (passwords are new on every run):")
        for username, tenant, staff in DEMO:
            password = secrets.token_urlsafe(9)
            user = User.objects.filter(username=username).first()
            if user is None:
                members.create_member(username=username, tenant_slug=tenant, password=password, staff=staff)
            else:
                user.set_password(password)
                user.save(update_fields=["password"])
            where = "  (staff: /admin/)" if staff else ""
            self.stdout.write(f"  {username:<6} tenant {tenant:<7} password {password}{where}")
