from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts import members


class Command(BaseCommand):
    help = "Create a user as a member of a tenant (the tenant is created if missing)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--tenant", required=True, help="Tenant slug, e.g. acme.")
        parser.add_argument("--password", help="Password (checked by the site's password validators); "
                                               "a random one is generated and printed if omitted.")
        parser.add_argument("--staff", action="store_true",
                            help=f"A triage member: may use the admin to view and triage jobs "
                                 f"(the {members.TRIAGE_GROUP!r} group), not to manage users or tokens.")

    def handle(self, *args: str, username: str, tenant: str, password: str | None, staff: bool,
               **options: object) -> None:
        try:
            user, password = members.create_member(username=username, tenant_slug=tenant, password=password,
                                                   staff=staff)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        # create_member refuses any slug but the one it files the member under: ``tenant`` is it.
        self.stdout.write(f"{user.username} ({tenant}{', staff' if staff else ''}) password: {password}")
