import secrets

from django.conf import settings
from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand

from accounts import members
from accounts.models import User

# (username, tenant, staff, team admin): alice administers acme's settings, so its webhooks, e-mail and
# supplier pages can be tried.
DEMO = [("alice", "acme", False, True), ("bob", "globex", False, False), ("staff", "acme", True, False)]
# A member who administers her team's settings (its webhooks, its allowed e-mail senders, its supplier
# register), not the site.
TEAM_ADMINS = "Team admins"
TEAM_ADMIN_PERMISSIONS = [("agent", "view_webhookendpoint"), ("agent", "change_webhookendpoint"),
                          ("mailin", "manage_inbox"), ("suppliers", "change_supplier")]


def team_admins() -> Group:
    """The demo's "Team admins" group, with the permissions a team's administrator needs."""
    group, _ = Group.objects.get_or_create(name=TEAM_ADMINS)
    wanted = Permission.objects.none()
    for app_label, codename in TEAM_ADMIN_PERMISSIONS:
        wanted |= Permission.objects.filter(content_type__app_label=app_label, codename=codename)
    group.permissions.add(*wanted)
    return group


class Command(BaseCommand):
    help = ("Create the demo tenants (acme, globex) and users (alice, acme's team admin; bob; staff); print their "
            "passwords.")

    def handle(self, *args: str, **options: object) -> None:
        self.stdout.write("Demo accounts (passwords are new on every run):")
        for username, tenant, staff, admin in DEMO:
            password = secrets.token_urlsafe(9)
            user = User.objects.filter(username=username).first()
            if user is None:
                user, _ = members.create_member(username=username, tenant_slug=tenant, password=password,
                                                staff=staff)
            else:
                user.set_password(password)
                user.save(update_fields=["password"])
            if admin:
                user.groups.add(team_admins())
            site = settings.SITE_URL
            where = (f"  (staff: {site}/admin/)" if staff else
                     f"  (team admin: {site}/account/webhooks)" if admin else "")
            self.stdout.write(f"  {username:<6} tenant {tenant:<7} password {password}{where}")
