"""The members' work on documents: a job's work state from its page, and bulk actions on the list.

Thin, like the queue app's views (``web.edge.endpoint``: the caller, CSRF, JSON or a page); every
write goes through ``agent.inbox.work.change``. Browsers are sent back with a 303 (POST-redirect-GET).
"""

from __future__ import annotations

from http import HTTPStatus

from django.contrib import messages
from django.http import HttpResponse, JsonResponse
from django.urls import reverse

from jobs.clock import queue_clock
from jobs.models import Job
from web import exports, status, wording, zones
from web.edge import EdgeRequest, HttpError, endpoint
from web.kind_pages import Refused
from web.redirects import back_under
from web.views import export_response, job_link, see_other

from .admin import WebhookForm
from .inbox import acceptances, notifications, work
from .inbox.webhooks import latest_deliveries, new_secret, schedule_catch_up
from .models import WebhookEndpoint
from .reading import findings

# At most this many documents in one bulk action (more than a page of the list holds).
MAX_SELECTED = 200
# The most digits an id can have and still fit a 64-bit key (19 digits may overflow it).
ID_DIGITS = 18
BULK_ACTIONS = ("handled", "approve", "assign", "export", "export_xlsx")
# The refusals that are about the document's state, not the input (409).
CONFLICTS = frozenset({"busy", "finding_stands", "fields_open", "not_reviewed", "not_completed", "no_such_finding"})


# The form field each refusal is about.
REFUSED_FIELDS = {"bad_state": "state", "not_a_member": "assignee", "note_too_long": "note",
                  "reason_required": "reason", "reason_too_long": "reason", "reason_invalid": "reason"}


def refusal(exc: work.WorkRefused) -> HttpError:
    return HttpError(404 if isinstance(exc, work.NoSuchJob) else 409 if exc.code in CONFLICTS else 400,
                     exc.code, exc.message, field=REFUSED_FIELDS.get(exc.code))


def back_to_work(asked: EdgeRequest, job_id: int, exc: work.WorkRefused) -> HttpResponse:
    """A browser's refused action on a document: back to its work panel, which says why (and, for
    standing findings, asks again for a reason)."""
    messages.error(asked.request, wording.sentence(exc.message))
    return see_other(reverse("job_detail", args=[job_id]) + "#work")


def assignee_of(value: str | None) -> int | type[work.KEEP] | None:
    """The form's assignee: "" nobody, a member's id, absent: left as it is."""
    if value is None:
        return work.KEEP
    if value == "":
        return None
    if not value.isdigit() or len(value) > ID_DIGITS:
        raise HttpError(400, "not_a_member", "a document can only be assigned to a member of your team",
                        field="assignee")
    return int(value)


@endpoint("POST")
def job_work(asked: EdgeRequest, job_id: int) -> HttpResponse:
    """Set a job's work state, assignee and note (each left as it is when absent)."""
    form = asked.request.POST
    try:
        change = work.change(tenant_id=asked.tenant_id, job_id=job_id, by_id=asked.identity.user.pk,
                             now=queue_clock.now(), state=form.get("state", work.KEEP) or work.KEEP,
                             assignee_id=assignee_of(form.get("assignee")), note=form.get("note", work.KEEP),
                             reason=form.get("reason"))
    except work.WorkRefused as exc:
        if asked.wants_json or isinstance(exc, work.NoSuchJob):
            raise refusal(exc) from None
        return back_to_work(asked, job_id, exc)
    if asked.wants_json:
        job = Job.objects.for_scope(asked.tenant_id).select_related("document").only(*status.LIST_FIELDS).get(pk=job_id)
        now = status.work_of([job])[job_id]
        return JsonResponse({"job": job_id, "state": now.state, "assignee": now.assignee or None, "note": now.note,
                             "changed": change is not None})
    if change is not None:
        messages.success(asked.request, "Saved.")
    return see_other(reverse("job_detail", args=[job_id]) + "#work")


@endpoint("POST")
def jobs_work(asked: EdgeRequest) -> HttpResponse:
    """The list's bulk actions on the selected documents: mark handled, assign to a member, export
    as CSV or .xlsx. An id that is not one of the tenant's jobs is skipped like an unknown one."""
    form = asked.request.POST
    action = form.get("action", "")
    if action not in BULK_ACTIONS:
        raise HttpError(400, "bad_action", f"the action must be one of: {', '.join(BULK_ACTIONS)}")
    ids = sorted({int(v) for v in form.getlist("job") if v.isdigit() and len(v) <= ID_DIGITS})[:MAX_SELECTED]
    back = back_under(form.get("next", ""), reverse("jobs")) or reverse("jobs")  # only back to the list
    if action in ("export", "export_xlsx"):
        jobs = (Job.objects.for_scope(asked.tenant_id).filter(pk__in=ids).select_related("document")
                .only(*status.LIST_FIELDS, "result").order_by("-id"))
        zone = zones.zone_name(form.get("tz", "")[:64])  # the reader's, as the list's form carries it
        return export_response(asked, exports.export(jobs, zone=zone, link=job_link(asked)), "selected",
                               "xlsx" if action == "export_xlsx" else "csv")
    if not ids:
        messages.info(asked.request, "Select documents first, with the boxes in the list.")
        return see_other(back)
    if action in ("handled", "approve"):
        return bulk_verdict(asked, ids, action=action, back=back)
    changed = 0
    for job_id in ids:
        try:
            if work.change(tenant_id=asked.tenant_id, job_id=job_id, by_id=asked.identity.user.pk,
                           now=queue_clock.now(), assignee_id=assignee_of(form.get("assignee", ""))) is not None:
                changed += 1
        except work.NoSuchJob:
            continue  # not the tenant's: nothing to say about it
        except work.WorkRefused as exc:
            raise refusal(exc) from None
    messages.success(asked.request, f"{changed} document{'s' if changed != 1 else ''} assigned.")
    return see_other(back)


def bulk_verdict(asked: EdgeRequest, ids: list[int], *, action: str, back: str) -> HttpResponse:
    """Mark handled or approve each selected document. Those on which blocking findings stand are
    left as they are and listed on a page that names each finding and asks again, for a reason
    that accepts them (posted with ``reason``: they are then accepted, by this member, and done).
    Documents that cannot be approved (a field still open, not reviewed) are counted and left."""
    form = asked.request.POST
    reason = form.get("reason") or None
    done, held, left = 0, [], []
    for job_id in ids:
        try:
            if action == "approve":
                work.approve(tenant_id=asked.tenant_id, job_id=job_id, by_id=asked.identity.user.pk,
                             now=queue_clock.now(), reason=reason)
                done += 1
            elif work.change(tenant_id=asked.tenant_id, job_id=job_id, by_id=asked.identity.user.pk,
                             now=queue_clock.now(), state=work.State.HANDLED.value, reason=reason) is not None:
                done += 1
        except work.NoSuchJob:
            continue  # not the tenant's: nothing to say about it
        except work.FindingsStand as exc:
            held.append((job_id, exc.findings))
        except work.WorkRefused as exc:
            if exc.code in REFUSED_FIELDS:  # the reason itself: nothing was done, say why
                raise refusal(exc) from None
            left.append((job_id, exc.message))
    verb = "approved" if action == "approve" else "marked handled"
    said = f"{done} document{'s' if done != 1 else ''} {verb}."
    if left:
        said += f" {len(left)} not {verb}: " + "; ".join(f"#{job_id}: {why}" for job_id, why in left[:5]) + "."
    if not held:
        (messages.success if not left else messages.warning)(asked.request, said)
        return see_other(back)
    jobs = {job.pk: job for job in Job.objects.for_scope(asked.tenant_id).filter(pk__in=[j for j, _ in held])
            .select_related("document").only(*status.LIST_FIELDS)}
    return asked.page("agent/accept_findings.html", {
        "action": action, "verb": verb, "said": said if done or left else "", "back": back,
        "held": [{"job": jobs[job_id], "findings": found} for job_id, found in held if job_id in jobs],
    }, status=409)


@endpoint("POST")
def job_approve(asked: EdgeRequest, job_id: int) -> HttpResponse:
    """Approve a document: confirm every field whose check passes and mark it handled; ``reason``
    accepts the blocking findings that stand (refused without one, naming them)."""
    try:
        done = work.approve(tenant_id=asked.tenant_id, job_id=job_id, by_id=asked.identity.user.pk,
                            now=queue_clock.now(), reason=asked.request.POST.get("reason") or None)
    except work.WorkRefused as exc:
        if asked.wants_json or isinstance(exc, work.NoSuchJob):
            raise refusal(exc) from None
        return back_to_work(asked, job_id, exc)
    if asked.wants_json:
        return JsonResponse({"job": job_id, "state": work.State.HANDLED.value, "confirmed": done.confirmed,
                             "accepted": [f["words"] for f in done.accepted]})
    messages.success(asked.request, "Approved: every field confirmed, and the document marked handled.")
    return see_other(reverse("job_detail", args=[job_id]) + "#work")


@endpoint("POST")
def job_accept(asked: EdgeRequest, job_id: int) -> HttpResponse:
    """Accept one finding of a document (``finding``: its key; none: every standing one) with a
    ``reason``, which clears it: the document's fields and outcome then read without it."""
    form = asked.request.POST
    keys = [k[:120] for k in form.getlist("finding") if k][:50] or None
    try:
        accepted = acceptances.accept(job_id=job_id, tenant_id=asked.tenant_id, user=asked.identity.user,
                                      reason=form.get("reason"), keys=keys, now=queue_clock.now())
    except Refused as exc:
        if exc.status == HTTPStatus.NOT_FOUND:
            raise HttpError(404, "not_found", "no such job") from None
        if asked.wants_json:
            raise HttpError(exc.status, exc.code, exc.message, field=exc.field, state=exc.state) from None
        messages.error(asked.request, wording.sentence(exc.message))
        return see_other(reverse("job_detail", args=[job_id]) + "#findings")
    if asked.wants_json:
        return JsonResponse({"job": job_id, "accepted": [findings.key(f) for f in accepted]})
    messages.success(asked.request, f"Accepted: {len(accepted)} finding{'s' if len(accepted) != 1 else ''}.")
    return see_other(reverse("job_detail", args=[job_id]) + "#findings")


# The digest's window a member may choose, in minutes.
MIN_EVERY, MAX_EVERY = 1, 24 * 60


@endpoint("GET", "POST")
def notification_settings(asked: EdgeRequest) -> HttpResponse:
    """Her email digest: on or off, and at most one email per how many minutes. Only her own: the
    page reads and writes the signed-in member's preference, whoever else is named anywhere. While
    her account has no email address the digest is shown off, and her choice of it is kept as it
    was: the page asks for an address instead. A refused value comes back by its field (400)."""
    user = asked.identity.user
    now = queue_clock.now()
    errors: dict[str, str] = {}
    pref = notifications.preference(user.pk, now=now)
    if asked.request.method == "POST":
        form = asked.request.POST
        every = form.get("every_minutes", "")
        if every.isdigit() and MIN_EVERY <= int(every) <= MAX_EVERY:
            enabled = form.get("enabled") == "on" if user.email else pref.enabled
            notifications.preference_update(user_id=user.pk, enabled=enabled, every_minutes=int(every), now=now)
            messages.success(asked.request, "Saved.")
            return see_other(reverse("notification_settings"))
        message = f"Choose a whole number of minutes from {MIN_EVERY} to {MAX_EVERY:,}."
        if asked.wants_json:
            raise HttpError(400, "bad_minutes", message, field="every_minutes")
        errors["every_minutes"] = message
    return asked.page("agent/notification_settings.html", {
        "preference": pref, "min_every": MIN_EVERY, "max_every": MAX_EVERY, "has_email": bool(user.email),
        "errors": errors, "every": asked.request.POST.get("every_minutes", "") if errors else pref.every_minutes,
    }, status=400 if errors else 200)


# --- The tenant's webhooks, set by its admin ------------------------------------------------

WEBHOOK_PERMISSION = "agent.change_webhookendpoint"
ONCE_KEY = "webhook_secret_once"  # the session's key for a new secret, shown on the next page only


def webhook_admin(asked: EdgeRequest) -> int:
    """The tenant of a member allowed to set its webhooks (the permission, granted by a superuser)."""
    user = asked.identity.user
    if asked.tenant_id is None or not user.has_perm(WEBHOOK_PERMISSION):
        raise HttpError(403, "forbidden", "only your team's administrator can set its webhooks: ask a superuser "
                                          "for the permission to change webhook endpoints")
    return asked.tenant_id


def tenants_endpoint(tenant_id: int, endpoint_id: int) -> WebhookEndpoint:
    """One of the tenant's endpoints; another tenant's is as unknown as a missing one (the same 404)."""
    found = WebhookEndpoint.objects.filter(pk=endpoint_id, tenant_id=tenant_id).first()
    if found is None:
        raise HttpError(404, "not_found", "no such webhook endpoint")
    return found


def show_secret_once(asked: EdgeRequest, endpoint: WebhookEndpoint) -> None:
    # Kept server-side in the session (never in the messages' cookie) and removed when shown.
    asked.request.session[ONCE_KEY] = {"endpoint": endpoint.pk, "secret": endpoint.secret}


@endpoint("GET", "POST")
def webhook_settings(asked: EdgeRequest) -> HttpResponse:
    """The tenant's endpoints, and a new one: its URL checked as the admin's form checks it (http(s),
    public addresses only), its secret made here and shown once."""
    tenant_id = webhook_admin(asked)
    form = WebhookForm(asked.request.POST) if asked.request.method == "POST" else None
    if form is not None:
        if not form.is_valid():
            field, errors = next(iter(form.errors.items()))
            if asked.wants_json:
                raise HttpError(400, "bad_webhook", " ".join(str(e) for e in errors),
                                field=None if field == "__all__" else field)
            return webhook_page(asked, tenant_id, form=form, status=400)  # the refusal by its field
        made = WebhookEndpoint.objects.create(
            tenant_id=tenant_id, url=form.cleaned_data["url"], secret=new_secret(),
            document_finished=form.cleaned_data["document_finished"],
            document_needs_action=form.cleaned_data["document_needs_action"])
        schedule_catch_up(now=queue_clock.now())  # the catch-up chain stops while no endpoint is active
        show_secret_once(asked, made)
        return see_other(reverse("webhook_settings"))
    return webhook_page(asked, tenant_id)


def webhook_page(asked: EdgeRequest, tenant_id: int, *, form: WebhookForm | None = None,
                 status: int = 200) -> HttpResponse:
    """The tenant's endpoints and the form to add one; a refused form comes back with what was
    typed and each error by its field."""
    shown = asked.request.session.pop(ONCE_KEY, None) if form is None else None
    errors = {name if name == "url" else "form": " ".join(str(e) for e in found)
              for name, found in form.errors.items()} if form else {}
    return asked.page("agent/webhook_settings.html", {
        "endpoints": WebhookEndpoint.objects.filter(tenant_id=tenant_id).order_by("id"),
        "deliveries": latest_deliveries(tenant_id), "shown": shown, "errors": errors,
        "typed": form.data if form is not None else {},
    }, partial=None if shown or form is not None else "endpoints", status=status)


@endpoint("POST")
def webhook_change(asked: EdgeRequest, endpoint_id: int) -> HttpResponse:
    """Rotate one endpoint's secret (the new one shown once), switch it on or off, or delete it."""
    found = tenants_endpoint(webhook_admin(asked), endpoint_id)
    action = asked.request.POST.get("action", "")
    if action == "rotate":
        found.secret = new_secret()
        found.save(update_fields=["secret"])
        show_secret_once(asked, found)
    elif action in ("disable", "enable"):
        found.active = action == "enable"
        found.save(update_fields=["active"])
        if found.active:
            schedule_catch_up(now=queue_clock.now())  # the catch-up chain stops while no endpoint is active
        messages.success(asked.request, f"Webhook {'enabled' if found.active else 'disabled'}.")
    elif action == "delete":
        found.delete()
        messages.success(asked.request, "Webhook deleted.")
    else:
        raise HttpError(400, "bad_action", "the action must be one of: rotate, disable, enable, delete")
    return see_other(reverse("webhook_settings"))
