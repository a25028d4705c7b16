from django.core.management.base import BaseCommand, CommandError

from jobs import members


class Command(BaseCommand):
    help = "Create a user as a member of a tenant (the tenant is created if missing)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--tenant", required=True, help="Tenant slug, e.g. acme.")
        parser.add_argument("--password", help="Password; a random one is generated and printed if omitted.")
        parser.add_argument("--staff", action="store_true", help="May use the admin (staff triage).")

    def handle(self, *args, username, tenant, password, staff, **options):
        try:
            user, password = members.create_member(username=username, tenant_slug=tenant, password=password, staff=staff)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{user.username} ({user.tenant.slug}{', staff' if staff else ''}) password: {password}")
