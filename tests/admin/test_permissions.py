"""Only staff reach the admin; only holders of jobs.triage_job move jobs; nobody edits one; only
superusers download a job's input."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry

from jobs.models import Job

from .conftest import CHANGELIST, confirm, start_action

TRIAGE_ACTIONS = ["retry_dead", "reconcile_done", "reconcile_not_done", "discard_unknown"]


def test_anonymous_visitors_are_sent_to_the_login_page(client):
    response = client.get(CHANGELIST)
    assert response.status_code == 302 and response.url.startswith("/admin/login/")


def test_a_member_who_is_not_staff_never_reaches_the_admin(client, alice, in_state):
    job = in_state("dead")
    client.force_login(alice)
    for url in ["/admin/", CHANGELIST, f"{CHANGELIST}{job.pk}/change/", f"{CHANGELIST}{job.pk}/payload/"]:
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith("/admin/login/"), url
    response = start_action(client, "retry_dead", job)
    assert response.status_code == 302 and response.url.startswith("/admin/login/")
    assert Job.objects.get(pk=job.pk).state == "dead"


def test_staff_without_any_job_permission_are_refused(client, make_member):
    staff = make_member("ops", "bare")
    staff.is_staff = True
    staff.save()
    client.force_login(staff)
    assert client.get(CHANGELIST).status_code == 403


def test_staff_without_the_triage_permission_see_jobs_but_are_offered_no_action(client, viewer, in_state):
    job = in_state("dead")
    client.force_login(viewer)
    listing = client.get(CHANGELIST)
    assert listing.status_code == 200 and job in listing.context["cl"].result_list
    assert not any(a in listing.content.decode() for a in TRIAGE_ACTIONS)

    page = client.get(f"{CHANGELIST}{job.pk}/change/")
    assert page.status_code == 200 and b'class="triage-buttons"' not in page.content


@pytest.mark.parametrize("action,state", [("retry_dead", "dead"), ("reconcile_done", "unknown"),
                                          ("reconcile_not_done", "unknown"), ("discard_unknown", "unknown")])
def test_staff_without_the_triage_permission_cannot_act(client, viewer, in_state, action, state):
    job = in_state(state)
    client.force_login(viewer)

    response = start_action(client, action, job)
    assert response.templates[0].name != "admin/jobs/job/triage_confirmation.html"  # the action is not theirs

    forged = client.post(CHANGELIST, {
        "action": action, "post": "yes", "_selected_action": [job.pk], "seen": [f"{job.pk}:{job.epoch}"],
        "reason": "r", "outcome": "done",
    })
    assert forged.status_code in (200, 302)
    assert Job.objects.get(pk=job.pk).state == state
    assert not LogEntry.objects.exists()


def test_the_triage_permission_is_what_allows_acting(client, viewer, in_state):
    from django.contrib.auth.models import Permission

    job = in_state("dead")
    viewer.user_permissions.add(Permission.objects.get(codename="triage_job"))
    client.force_login(viewer)
    confirm(client, start_action(client, "retry_dead", job), reason="now allowed")
    assert Job.objects.get(pk=job.pk).state == "queued"


def test_nobody_edits_adds_or_deletes_a_job_in_the_admin(client, admin_user, in_state):
    job = in_state("dead")
    client.force_login(admin_user)  # a superuser, even
    page = client.get(f"{CHANGELIST}{job.pk}/change/")
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert client.post(f"{CHANGELIST}{job.pk}/change/", {"state": "completed", "epoch": 0}).status_code == 403
    assert client.get(f"{CHANGELIST}add/").status_code == 403
    assert client.post(f"{CHANGELIST}{job.pk}/delete/", {"post": "yes"}).status_code == 403
    job.refresh_from_db()
    assert (job.state, job.epoch) == ("dead", 1)


def test_the_changelist_offers_no_bulk_delete(client, admin_user, in_state):
    in_state("dead")
    client.force_login(admin_user)
    assert "delete_selected" not in client.get(CHANGELIST).content.decode()


def test_downloads_of_a_jobs_input_are_refused_to_staff_not_granted_view_document(client, make_member, viewer,
                                                                                 triager, in_state):
    job = in_state("dead")
    bare = make_member("ops", "tokens-only")
    bare.is_staff = True
    bare.save()
    for staff in (bare, viewer, triager):
        client.force_login(staff)
        assert client.get(f"{CHANGELIST}{job.pk}/payload/").status_code == 403
        assert client.get(f"{CHANGELIST}{job.pk}/document/").status_code == 403
    assert not LogEntry.objects.exists()
