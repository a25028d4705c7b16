"""Staff triage jobs; only superusers manage users, groups, permissions and other people's tokens.

The attack these pin: a staff member re-posts its own user form with is_superuser=on, issues
an API token for a member of another tenant and reads that tenant's jobs with it, and opens
another member's set-password page. Each must fail for a triage member, and for a staff
member someone granted change_user and token permissions too; a superuser can still do all of it.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.test import Client

from accounts import tokens
from accounts.members import TRIAGE_GROUP
from accounts.models import ApiToken, User

USERS = "/admin/accounts/user/"
TOKENS = "/admin/accounts/apitoken/"


def user_form(user: User, **changes) -> dict:
    """Everything the user change form posts for ``user``, with ``changes`` on top (True -> "on")."""
    user.refresh_from_db()
    data = {
        "username": user.username, "first_name": user.first_name, "last_name": user.last_name,
        "email": user.email, "tenant": user.tenant_id or "",
        "date_joined_0": f"{user.date_joined:%Y-%m-%d}", "date_joined_1": f"{user.date_joined:%H:%M:%S}",
        "last_login_0": "", "last_login_1": "",
        "groups": [g.pk for g in user.groups.all()],
        "user_permissions": [p.pk for p in user.user_permissions.all()],
    }
    flags = {"is_active": user.is_active, "is_staff": user.is_staff, "is_superuser": user.is_superuser}
    for name, value in {**flags, **changes}.items():
        if value is True:
            data[name] = "on"
        elif value is False:
            data.pop(name, None)
        else:
            data[name] = value
    return data


def perms(*codenames: str) -> list[Permission]:
    return [Permission.objects.get(content_type__app_label__in=["jobs", "accounts"], codename=c) for c in codenames]


@pytest.fixture
def user_manager(make_member):
    """Staff someone granted user and token permissions, but neither superuser nor triage_job."""
    user = make_member("ops", "helpdesk", staff=True)
    user.groups.clear()
    user.user_permissions.set(perms("view_job", "view_user", "change_user", "view_apitoken", "add_apitoken",
                                    "change_apitoken"))
    return user


@pytest.fixture
def bobs_job(accept, bob):
    return accept("diagnostic.sleep", {"seconds": 1}, user=bob)


def can_read_bobs_job(secret: str, job) -> bool:
    response = Client(headers={"Authorization": f"Bearer {secret}"}).get(f"/jobs/{job.pk}")
    return response.status_code == 200 and response.json()["id"] == job.pk


def privileges(user: User) -> tuple:
    user.refresh_from_db()
    return (user.is_superuser, user.is_staff, sorted(user.groups.values_list("name", flat=True)),
            sorted(user.user_permissions.values_list("codename", flat=True)), user.tenant.slug)


# --- createmember --staff: a triage member, nothing more


def test_a_staff_member_is_in_the_triage_group_and_may_only_view_and_triage_jobs(make_member):
    staff = make_member("ops", "triage1", staff=True)
    assert staff.is_staff and not staff.is_superuser
    assert list(staff.groups.values_list("name", flat=True)) == [TRIAGE_GROUP]
    assert staff.user_permissions.count() == 0
    assert staff.get_all_permissions() == {"jobs.view_job", "jobs.triage_job"}


def test_the_triage_group_is_made_once_and_a_superusers_changes_to_it_are_kept(make_member):
    make_member("ops", "triage1", staff=True)
    group = Group.objects.get(name=TRIAGE_GROUP)
    group.permissions.remove(*perms("triage_job"))  # a superuser decides triage needs a second look

    second = make_member("ops", "triage2", staff=True)
    assert Group.objects.filter(name=TRIAGE_GROUP).count() == 1
    assert second.groups.get() == group
    assert User.objects.get(pk=second.pk).get_all_permissions() == {"jobs.view_job"}


def test_a_member_who_is_not_staff_joins_no_group(alice):
    assert not alice.is_staff and alice.groups.count() == 0 and alice.get_all_permissions() == set()


def test_a_triage_member_renders_every_triage_page(client, triager, in_state):
    jobs = [in_state(s) for s in ("dead", "unknown", "completed")]
    client.force_login(triager)
    for url in ["/admin/", "/admin/jobs/", "/admin/jobs/job/", *[f"/admin/jobs/job/{j.pk}/change/" for j in jobs],
                f"/admin/jobs/job/{jobs[0].pk}/history/"]:
        assert client.get(url).status_code == 200, url


def test_a_triage_member_reaches_no_user_group_tenant_or_token_page(client, triager, alice):
    secret = tokens.issue(alice)
    token = ApiToken.objects.get(digest=tokens.digest(secret))
    client.force_login(triager)
    for url in [USERS, f"{USERS}add/", f"{USERS}{triager.pk}/change/", f"{USERS}{triager.pk}/password/",
                "/admin/auth/group/", "/admin/accounts/tenant/", "/admin/accounts/tenant/add/",
                TOKENS, f"{TOKENS}add/", f"{TOKENS}{token.pk}/change/"]:
        assert client.get(url).status_code == 403, url
    index = client.get("/admin/").content.decode()
    assert USERS not in index and TOKENS not in index and "/admin/auth/group/" not in index


# --- the escalation, as a triage member and as staff granted user and token permissions


@pytest.mark.parametrize("attacker", ["triager", "user_manager"])
def test_staff_cannot_make_itself_superuser_by_posting_its_own_user_form(client, request, attacker):
    staff = request.getfixturevalue(attacker)
    before = privileges(staff)
    client.force_login(staff)
    all_permissions = list(Permission.objects.values_list("pk", flat=True))
    response = client.post(f"{USERS}{staff.pk}/change/", user_form(
        staff, is_superuser=True, is_staff=True, user_permissions=all_permissions,
        groups=list(Group.objects.values_list("pk", flat=True)), first_name="Eve",
    ))
    assert response.status_code == (403 if attacker == "triager" else 302)
    assert privileges(staff) == before
    if attacker == "user_manager":  # the ordinary field it may change did change: the save ran
        assert User.objects.get(pk=staff.pk).first_name == "Eve"


def test_staff_with_change_user_sees_privileges_read_only(client, user_manager, alice):
    client.force_login(user_manager)
    for user in (user_manager, alice):
        form = client.get(f"{USERS}{user.pk}/change/").context["adminform"].form
        assert not {"is_superuser", "is_staff", "groups", "user_permissions"} & set(form.fields)
    assert "tenant" not in client.get(f"{USERS}{user_manager.pk}/change/").context["adminform"].form.fields
    assert "tenant" in client.get(f"{USERS}{alice.pk}/change/").context["adminform"].form.fields


def test_staff_with_change_user_cannot_grant_privileges_to_anyone_else(client, user_manager, alice):
    before = privileges(alice)
    client.force_login(user_manager)
    response = client.post(f"{USERS}{alice.pk}/change/", user_form(
        alice, is_staff=True, is_superuser=True, user_permissions=[p.pk for p in perms("change_user")],
        groups=[Group.objects.get(name=TRIAGE_GROUP).pk], email="alice@acme.example",
    ))
    assert response.status_code == 302
    assert privileges(alice) == before
    assert User.objects.get(pk=alice.pk).email == "alice@acme.example"


def test_staff_with_change_user_cannot_move_itself_to_another_tenant(client, user_manager, bob):
    client.force_login(user_manager)
    response = client.post(f"{USERS}{user_manager.pk}/change/", user_form(user_manager, tenant=bob.tenant_id))
    assert response.status_code == 302
    assert User.objects.get(pk=user_manager.pk).tenant.slug == "ops"


def test_staff_with_change_user_cannot_touch_a_superuser_or_add_users(client, user_manager, superuser):
    client.force_login(user_manager)
    response = client.post(f"{USERS}{superuser.pk}/change/", user_form(superuser, is_active=False))
    assert response.status_code == 403 and User.objects.get(pk=superuser.pk).is_active
    assert client.get(f"{USERS}add/").status_code == 403
    assert client.post(f"{USERS}add/", {"username": "mole", "usable_password": "true", "password1": "tps-report-99",
                                        "password2": "tps-report-99"}).status_code == 403
    assert not User.objects.filter(username="mole").exists()


def test_groups_are_for_superusers_even_when_group_permissions_are_granted(client, user_manager):
    user_manager.user_permissions.add(*Permission.objects.filter(content_type__app_label="auth"))
    group = Group.objects.create(name="Everything")
    client.force_login(user_manager)
    assert client.get("/admin/auth/group/").status_code == 403
    response = client.post(f"/admin/auth/group/{group.pk}/change/", {
        "name": "Everything", "permissions": list(Permission.objects.values_list("pk", flat=True)),
    })
    assert response.status_code == 403 and group.permissions.count() == 0


@pytest.mark.parametrize("attacker", ["triager", "user_manager"])
def test_staff_cannot_issue_a_token_for_a_member_of_another_tenant(client, request, attacker, bob, bobs_job):
    staff = request.getfixturevalue(attacker)
    client.force_login(staff)
    response = client.post(f"{TOKENS}add/", {"user": bob.pk})
    if attacker == "triager":
        assert response.status_code == 403
    else:
        assert response.status_code == 200 and "user" in response.context["adminform"].form.errors
    assert not ApiToken.objects.exists()


def test_staff_with_token_permissions_sees_issues_and_revokes_only_its_own_tokens(client, user_manager, bob):
    bobs = tokens.issue(bob)
    client.force_login(user_manager)
    assert client.get(TOKENS).context["cl"].result_count == 0
    bob_token = ApiToken.objects.get(user=bob)
    assert client.get(f"{TOKENS}{bob_token.pk}/change/").status_code == 302  # "does not exist"
    client.post(TOKENS, {"action": "revoke_tokens", "index": 0, "_selected_action": [bob_token.pk]})
    assert tokens.user_for(bobs) == bob

    form = client.get(f"{TOKENS}add/").context["adminform"].form
    assert list(form.fields["user"].queryset) == [user_manager]
    own = client.post(f"{TOKENS}add/", {"user": user_manager.pk})
    assert tokens.user_for(own.context["token"]) == user_manager


@pytest.mark.parametrize("attacker", ["triager", "user_manager"])
def test_staff_cannot_open_or_post_another_members_set_password_page(client, request, attacker, alice):
    staff = request.getfixturevalue(attacker)
    client.force_login(staff)
    assert client.get(f"{USERS}{alice.pk}/password/").status_code == 403
    response = client.post(f"{USERS}{alice.pk}/password/", {
        "usable_password": "true", "password1": "taken-over-123", "password2": "taken-over-123",
    })
    assert response.status_code == 403
    assert User.objects.get(pk=alice.pk).check_password("alice-pass-123")


def test_a_superuser_still_can_do_all_of_it(client, superuser, triager, alice, bob, bobs_job):
    client.force_login(superuser)

    response = client.post(f"{USERS}{triager.pk}/change/", user_form(triager, is_superuser=True))
    assert response.status_code == 302 and User.objects.get(pk=triager.pk).is_superuser

    issued = client.post(f"{TOKENS}add/", {"user": bob.pk})
    assert issued.status_code == 200 and can_read_bobs_job(issued.context["token"], bobs_job)

    assert client.get(f"{USERS}{alice.pk}/password/").status_code == 200
    response = client.post(f"{USERS}{alice.pk}/password/", {
        "usable_password": "true", "password1": "new-alice-pass-9", "password2": "new-alice-pass-9",
    })
    assert response.status_code == 302 and User.objects.get(pk=alice.pk).check_password("new-alice-pass-9")


def test_a_member_may_still_set_its_own_password_when_granted_change_user(client, user_manager):
    client.force_login(user_manager)
    response = client.post(f"{USERS}{user_manager.pk}/password/", {
        "usable_password": "true", "password1": "own-new-pass-77", "password2": "own-new-pass-77",
    })
    assert response.status_code == 302 and User.objects.get(pk=user_manager.pk).check_password("own-new-pass-77")

