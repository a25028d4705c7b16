"""Thin views: one URL scheme for browsers (HTML, htmx partials) and API clients (JSON).

``edge.endpoint`` resolves the caller, the CSRF check and the negotiation once and hands the
view an ``EdgeRequest``; reads come from ``web.status``, every write goes through ``jobs.queue``
(by way of ``web.submissions``), and JSON answers are ``web.schemas`` models (the ones
``/openapi.json`` describes).
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable, Iterator
from http import HTTPStatus
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotModified,
    HttpResponseRedirect,
    JsonResponse,
)
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET
from django_htmx.http import HttpResponseClientRedirect

from documents import rules
from documents import store as document_store
from documents.models import original_name
from jobs import kinds, queue
from jobs.clock import queue_clock
from jobs.models import Job

from . import (
    edge,
    exports,
    kind_pages,
    parsing,
    photos,
    polling,
    refusals,
    saved_filters,
    schemas,
    status,
    submissions,
    wording,
    zones,
)
from .edge import EdgeRequest, HtmxHttpRequest, HttpError
from .kind_pages import Refused
from .openapi import openapi

# The refusals of a batch's files, kept in the session for its page (the jobs are in the table).
REFUSED_SESSION_KEY = "refused-{batch}"
REFUSED_KEPT = 100  # as many as the form can carry (DATA_UPLOAD_MAX_NUMBER_FILES)
# The list as the member last filtered it: the job page's way back to it.
LIST_SESSION_KEY = "list-url"
# The list's orders, for its "Sort by" choice (schemas.Sort).
SORT_CHOICES = [("", "Newest first"), ("submitted", "Oldest first"),
                ("-invoice_date", "Invoice date, newest"), ("invoice_date", "Invoice date, oldest"),
                ("-total", "Total, highest"), ("total", "Total, lowest"),
                ("supplier", "Supplier, A to Z"), ("-supplier", "Supplier, Z to A")]


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return redirect("jobs")


class LoginView(auth_views.LoginView):
    """Log in, then to ``next`` when it is safe (Django's check), else where this user works:
    staff who may see jobs to the admin's triage list (the jobs that need a human), other
    staff to the admin's index, members to their jobs list (``LOGIN_REDIRECT_URL``)."""

    redirect_authenticated_user = True

    def get_default_redirect_url(self) -> str:
        user = self.request.user
        if user.is_staff:
            if user.has_perm("jobs.view_job"):
                return reverse("admin:jobs_job_changelist") + "?state=needs_human"
            return reverse("admin:index")
        return super().get_default_redirect_url()


def render_form(request: HtmxHttpRequest, error: HttpError | None = None) -> HttpResponse:
    """The submit form, or the form again with each refusal next to its field.

    What was typed comes back; a body refused before it was read (413 on its declared size)
    has nothing to give back, and static/jobs.js puts the chosen files and text back in place.
    """
    too_large = error is not None and error.status == HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    read = error is not None and not (too_large and not isinstance(error, edge.FormRefused))
    values = request.POST if read else {}
    errors: dict[str, list[edge.Refusal]] = {}
    for refusal in refusals.refusals(request, error) if error else []:
        errors.setdefault(refusal.field or "form", []).append(refusal)
    offered = kinds.offered_kinds()
    largest = max((rules.max_bytes(k.name) for k in offered), default=0)
    template = "web/job_new.html" + ("#form" if request.htmx else "")
    return render(request, template, {
        "nav": "new", "kinds": offered, "operation_key": values.get("idempotency_key") or uuid.uuid4().hex,
        "errors": errors, "values": values, "max_files": edge.MAX_BATCH_FILES, "max_photos": photos.MAX_PHOTOS,
        "max_file_bytes": largest, "max_file_words": refusals.size_words(largest) if largest else "",
    }, status=error.status if error else 200)


@edge.endpoint("GET", "HEAD", "POST", refused=render_form)
def jobs(asked: EdgeRequest) -> HttpResponse:
    return submit(asked) if asked.request.method == "POST" else job_list(asked)


def submit(asked: EdgeRequest) -> HttpResponse:
    if asked.wants_json:
        acceptance = submissions.submit(asked)
        url = schemas.status_url(acceptance.job.pk)
        return asked.json(schemas.Accepted.of(acceptance.job), status=202,
                         headers={"Location": url, "Retry-After": str(submissions.RETRY_AFTER_ACCEPTED)})
    sent = submissions.submit_form(asked)
    if sent.batch:
        asked.request.session[REFUSED_SESSION_KEY.format(batch=sent.batch)] = [
            {"name": r.name, "message": r.message} for r in sent.refused[:REFUSED_KEPT]]
        url = reverse("batch_detail", args=[sent.batch])
    else:
        url = schemas.status_url(sent.jobs[0].pk)
    return HttpResponseClientRedirect(url) if asked.htmx else see_other(url)


def list_query(asked: EdgeRequest) -> tuple[schemas.JobListQuery, str]:
    """The list's query; for a browser, a filter it cannot read is dropped and said so (the API's is a 400)."""
    data = asked.request.GET.dict()
    if asked.wants_json:
        return parsing.validated(schemas.JobListQuery, data), ""
    dropped: list[str] = []
    while True:
        try:
            query = parsing.validated(schemas.JobListQuery, data)
        except HttpError as exc:
            if not exc.field or exc.field not in data:
                return schemas.JobListQuery(), "The filters were not understood, so none is applied."
            dropped.append(exc.field)
            data = {name: value for name, value in data.items() if name != exc.field}
            continue
        names = ", ".join(f"“{name}”" for name in dropped)
        return query, (f"The filter{'s' if len(dropped) > 1 else ''} {names} {'were' if len(dropped) > 1 else 'was'} "
                       "not understood, so not applied." if dropped else "")


def job_filter(asked: EdgeRequest, query: schemas.JobListQuery) -> status.JobFilter:
    scope = query.scope or (schemas.Scope.TEAM if asked.wants_json else schemas.Scope.MINE)
    return status.JobFilter(
        tenant_id=asked.tenant_id, user_id=asked.identity.user.pk if scope == schemas.Scope.MINE else None,
        state=query.state.value if query.state else "", q=query.q, outcome=query.outcome,
        needs_action=query.needs_action, since=query.since, until=query.until, zone=query.tz or "UTC",
        duplicates=query.duplicates, viewer_id=asked.identity.user.pk, sort=query.sort.value if query.sort else "",
    )


def job_list(asked: EdgeRequest) -> HttpResponse:
    query, notice = list_query(asked)
    f = job_filter(asked, query)
    filters = {name: getattr(f, name) for name in ("user_id", "q", "outcome", "needs_action", "since", "until", "zone",
                                                   "duplicates", "viewer_id", "sort")}
    page = status.job_page(tenant_id=f.tenant_id, state=f.state, page=query.page, **filters)
    params = query.params()
    duplicates = status.duplicates_of(page.object_list)
    if asked.wants_json:
        return asked.json(schemas.JobList.of(page, params, duplicates, status.work_of(page.object_list)))
    mine = f.user_id is not None
    # The job page's way back keeps these filters: built here from the validated query, never read from a URL.
    if asked.identity.via == "session":
        back = reverse("jobs") + (f"?{urlencode({**params, 'page': page.number})}" if params or page.number > 1 else "")
        if asked.request.session.get(LIST_SESSION_KEY) != back:
            asked.request.session[LIST_SESSION_KEY] = back
    return asked.page("web/job_list.html", {
        "nav": "list", "page": page, "query": query, "params": params, "mine": mine, "show_submitter": not mine,
        "notice": notice,
        "states": wording.state_choices(), "outcomes": status.outcome_choices(),
        "filtered": any(name not in ("scope", "tz", "sort") for name in params),
        # The count is in the page's quick filters, which a poll of the rows does not replace.
        "needing_action": None if asked.htmx else status.needing_action(tenant_id=f.tenant_id, user_id=f.user_id,
                                                                       viewer_id=f.viewer_id),
        "poll_seconds": polling.LIST_POLL_SECONDS, "live": any(not job.is_terminal for job in page),
        "delay_notice": queue_delay(waiting.kind) if (waiting := next(
            (job for job in page if job.state == Job.State.QUEUED), None)) and not asked.htmx else "",
        "poll_query": urlencode({**params, "page": page.number}),
        "scope_query": {scope: urlencode({**params, "scope": scope}) for scope in ("mine", "team")},
        "page_query": urlencode(params),
        "action_query": urlencode({k: v for k, v in {**params, "needs_action": "1"}.items()}),
        "duplicates": duplicates, "duplicates_query": urlencode({**params, "duplicates": "1"}),
        "all_query": urlencode({k: v for k, v in params.items() if k == "scope"}),
        "export_query": urlencode(params), "csv": csv_format(asked),
        "show_columns": True, "columns": status.list_columns_of(page.object_list), "sorts": SORT_CHOICES,
        # Work states and the bulk form (agent.views.jobs_work): rows are selected into it.
        "works": status.work_of(page.object_list), "selectable": True,
        "members": status.members(f.tenant_id), "list_url": asked.request.get_full_path(),
        # The member's saved filters (web.saved_filters), the one shown now marked; the form saves these.
        "saved": saved_filters.saved_filters(tenant_id=f.tenant_id, user_id=asked.identity.user.pk,
                                             current=urlencode(params)),
        "saved_query": urlencode(params),
    }, partial="rows")


@edge.endpoint("POST")
def jobs_filters(asked: EdgeRequest) -> HttpResponse:
    """Save the list's current filters under a name (the same name again replaces them); back to the list."""
    form = asked.request.POST
    query = form.get("query", "")
    try:
        created = saved_filters.save_filter(tenant_id=asked.tenant_id, user_id=asked.identity.user.pk,
                                            name=form.get("name", ""), query=query, now=queue_clock.now())
    except saved_filters.FilterRefused as exc:
        messages.error(asked.request, str(exc))
        return see_other(reverse("jobs") + _list_tail(query))
    name = " ".join(form.get("name", "").split())
    messages.success(asked.request, f"Saved as “{name}”." if created else f"“{name}” now keeps these filters.")
    return see_other(reverse("jobs") + _list_tail(query))


@edge.endpoint("POST")
def jobs_filter_delete(asked: EdgeRequest, filter_id: int) -> HttpResponse:
    """Delete one of the member's saved filters; another's, or an unknown id, is the usual 404."""
    name = saved_filters.delete_filter(tenant_id=asked.tenant_id, user_id=asked.identity.user.pk, filter_id=filter_id)
    if name is None:
        raise Http404("no such saved filter")
    messages.success(asked.request, f"The saved filters “{name}” are deleted.")
    return see_other(list_url(asked))


def _list_tail(query: str) -> str:
    """``?query`` for the list, when the list reads it; else nothing (the list unfiltered)."""
    try:
        kept = saved_filters.list_query(query)
    except saved_filters.FilterRefused:
        return ""
    return f"?{kept}" if kept else ""


@edge.endpoint("GET", "HEAD")
def jobs_export(asked: EdgeRequest, extension: str = "csv") -> HttpResponse:
    """The list's jobs (every page, as filtered), one row per document: CSV in the reader's
    locale, or an .xlsx workbook (``extension``)."""
    query, _ = list_query(asked)
    zone = zones.zone_name(query.tz)
    return export_response(asked, exports.export(exports.export_jobs(job_filter(asked, query)), zone=zone,
                                                link=job_link(asked)), "documents", extension)


def job_link(asked: EdgeRequest) -> Callable[[int], str]:
    """A job's page as an absolute URL, from the request (the CSV's link column)."""
    return lambda job_id: asked.request.build_absolute_uri(reverse("job_detail", args=[job_id]))


def export_zone(asked: EdgeRequest) -> str:
    """The reader's zone for a CSV, from ``tz`` (static/jobs.js adds it to the export's link): UTC if unknown."""
    return zones.zone_name(asked.request.GET.get("tz", "")[:64])


@edge.endpoint("GET", "HEAD")
def job_detail(asked: EdgeRequest, job_id: int) -> HttpResponse:
    if asked.wants_json:
        return job_json(asked, job_id)
    return job_page(asked, status.job_status(tenant_id=asked.tenant_id, job_id=job_id))


def job_json(asked: EdgeRequest, job_id: int) -> HttpResponse:
    """The job as JSON, with its ETag. A poller that sends its last one (If-None-Match) pays the
    validator's read (``status.job_version``, one query), and gets a bodiless 304 while it still
    holds; otherwise the answer is read after it, or with it on a first read (the status read
    carries the version's columns). Either way the tag is never newer than the answer: a change
    between two reads makes it older (asked again, a new answer), never a change missed."""
    sent_tag = asked.request.headers.get("If-None-Match", "")
    version = status.job_version(tenant_id=asked.tenant_id, job_id=job_id) if sent_tag else None
    response: HttpResponse
    if version is not None and polling.still_current(sent_tag, version.tag):
        response, job, tag = HttpResponseNotModified(), version.job, version.tag
    else:
        found = status.job_status(tenant_id=asked.tenant_id, job_id=job_id, tagged=version is None)
        job, tag = found.job, version.tag if version is not None else found.tag
        response = asked.json(schemas.Job.of(job, found.events, found.duplicate, result=status.shown_result(job),
                                            work=status.work_of([job]).get(job.pk)))
    response["ETag"] = tag
    if not job.is_terminal:
        response["Retry-After"] = str(polling.retry_after(job, queue_clock.now()))
    return response


def job_page(asked: EdgeRequest, found: status.JobStatus, *, refused: dict[str, str] | None = None,
             code: int = 200) -> HttpResponse:
    """The job's page (its status partial for htmx); ``refused``: a refused correction (its
    ``field``, the ``message`` and the ``value`` typed), shown again at its form."""
    job = found.job
    polls = polling.poll_count(asked.request.GET.get("poll"))
    pages = kind_pages.of(job.kind)
    result = status.shown_result(job)  # None until completed; with the members' corrections
    document = status.document_pane(job, page_url=lambda n: reverse("job_page_image", args=[job.pk, n]),
                                    download_url=reverse("job_document", args=[job.pk]),
                                    requested=asked.request.GET.get("page"), result=result)
    timeline = wording.timeline(found.events, viewer_id=asked.identity.user.pk, words=pages.words)
    remarks = pages.history(job.pk, asked.identity.user.pk)  # what the kind adds: who corrected which value
    timeline = sorted([*timeline, *(wording.Moment(r.at, r.words, r.tone) for r in remarks)],
                      key=lambda moment: moment.at)
    delay_notice = queue_delay(job.kind) if job.state == Job.State.QUEUED else ""
    return asked.page("web/job_detail.html", {
        "job": job, "timeline": timeline, "delay_notice": delay_notice,
        "headline": wording.headline(job, wording.progress_words(job), delayed=bool(delay_notice)),
        "result_template": pages.result_template, "result": result,
        "view": pages.present(result) if result is not None else {},
        "has_note": bool(result is not None and pages.note(result)),
        "correctable": pages.supports_corrections and job.state == Job.State.COMPLETED,
        "refused": refused or {},
        "delay": polling.page_poll_delay(job, polls), "next_poll": polls + 1,
        "again_key": uuid.uuid4().hex, "document": document, "duplicate": found.duplicate,
        "resubmission": queue.resubmission(found.events),
        **work_context(asked, job, pages),
        "back_url": list_url(asked),
    }, partial="status", status=code)


def queue_delay(kind: str) -> str:
    """The delayed-reviews notice in the kind's words ("" while the queue is on time): read when a
    page shows a waiting job, and the apps told that it was noticed (staff's alert)."""
    now = queue_clock.now()
    return wording.delay_words(queue.notice_lateness(now=now), now, wording.words_of(kind))


def list_url(asked: EdgeRequest) -> str:
    """Back to the list as the member last filtered it (kept in the session by ``job_list``); only
    ever the list's own path."""
    kept = asked.request.session.get(LIST_SESSION_KEY, "") if asked.identity.via == "session" else ""
    jobs = reverse("jobs")
    return kept if isinstance(kept, str) and (kept == jobs or kept.startswith(jobs + "?")) else jobs


@edge.endpoint("PATCH", "POST")
def job_field(asked: EdgeRequest, job_id: int, field: str) -> HttpResponse:
    """Correct one field of a completed job's result, or confirm its value as seen: JSON
    ``{"value": ...}`` or ``{"confirm": true}`` (PATCH, for API clients), or the job page's forms
    (POST). Browsers go back to the field on the job's page (303); htmx gets the page's status
    part; a refused value comes back at its form, with the reason."""
    found = status.job_status(tenant_id=asked.tenant_id, job_id=job_id)  # foreign ids: the same 404
    pages = kind_pages.of(found.job.kind)
    value, confirm = submissions.correction(asked)
    try:
        if not pages.supports_corrections:
            raise Refused(409, "not_correctable", "this kind of job has no fields to correct", state=found.job.state)
        done = pages.correct(job_id=job_id, tenant_id=asked.tenant_id, user=asked.identity.user, field=field,
                             value=value, confirm=confirm, now=queue_clock.now())
    except Refused as exc:
        if exc.status == HTTPStatus.NOT_FOUND:
            raise Http404("no such job") from None
        if asked.wants_json or exc.status != HTTPStatus.BAD_REQUEST:
            raise HttpError(exc.status, exc.code, exc.message, field=exc.field, state=exc.state) from None
        return job_page(asked, found, refused={"field": field, "message": wording.sentence(exc.message),
                                              "value": value or ""}, code=400)
    if asked.wants_json:
        return asked.json(schemas.FieldCorrection.of(job_id, done))
    if asked.htmx:
        return job_page(asked, status.job_status(tenant_id=asked.tenant_id, job_id=job_id))
    return see_other(f"{schemas.status_url(job_id)}#field-{done.field}")


def work_context(asked: EdgeRequest, job: Job, pages: kind_pages.KindPages) -> dict[str, object]:
    """The job page's work state form (agent.views.job_work) and its history lines, for a kind that keeps them."""
    if not pages.supports_work:
        return {}
    return {"work": status.work_of([job]).get(job.pk), "work_states": pages.work_states,
            "members": status.members(asked.tenant_id), "work_history": status.work_moments(job)}


@edge.endpoint("GET", "HEAD")
def job_result(asked: EdgeRequest, job_id: int) -> HttpResponse:
    """A completed job's result, as a JSON file to keep: with the members' corrections, each
    beside the value the review read."""
    job = status.job_status(tenant_id=asked.tenant_id, job_id=job_id).job
    result = status.shown_result(job)
    if result is None:
        raise Http404("no result yet")
    body = json.dumps(result, indent=2, ensure_ascii=False, sort_keys=True)
    return attachment(body, "application/json", f"{download_name(job)}-result.json")


@edge.endpoint("GET", "HEAD")
def job_page_image(asked: EdgeRequest, job_id: int, number: int) -> HttpResponseBase:
    """One page of a job's document as an image, kept beside the document when it was reviewed."""
    document = status.job_document(tenant_id=asked.tenant_id, job_id=job_id).document
    with _store_reachable():
        image = document_store.open_page_image(document.name, number)
    if image is None:
        raise Http404("no such page")
    return FileResponse(image, content_type=document_store.PAGE_MEDIA_TYPE)


@edge.endpoint("GET", "HEAD")
def job_document(asked: EdgeRequest, job_id: int) -> HttpResponseBase:
    """The document as it was sent: always saved as a file, never shown in the site's pages."""
    document = status.job_document(tenant_id=asked.tenant_id, job_id=job_id).document
    with _store_reachable():
        stored = document_store.open_document(document.name)
    if stored is None:
        raise Http404("the document is no longer kept")
    content, size = stored
    response = FileResponse(content, as_attachment=True,
                            filename=document_store.download_filename(document.original_name),
                            content_type=document_store.download_type(document.content_type))
    response["Content-Length"] = str(size)
    return response


@contextlib.contextmanager
def _store_reachable() -> Iterator[None]:
    """503 while the document store cannot be reached (documents kept in an object store)."""
    try:
        yield
    except document_store.StoreUnavailable:
        raise edge.HttpError(503, "store_unavailable", "the document store is unavailable; retry later",
                             headers={"Retry-After": str(document_store.STORE_RETRY_SECONDS)}) from None


@edge.endpoint("GET", "HEAD")
def job_note(asked: EdgeRequest, job_id: int) -> HttpResponse:
    """A completed job's note (the kind's text), as a .txt file."""
    job = status.job_status(tenant_id=asked.tenant_id, job_id=job_id).job
    result = status.shown_result(job)
    text = kind_pages.of(job.kind).note(result) if result is not None else ""
    if not text:
        raise Http404("no note")
    return attachment(text + "\n", "text/plain; charset=utf-8", f"{download_name(job)}-note.txt")


@edge.endpoint("GET", "HEAD", "POST")
def job_cancel(asked: EdgeRequest, job_id: int) -> HttpResponse:
    """Cancel a job: at once while it waits (200), by a request its worker answers while it
    runs (202). Browsers go back to the job's page. A GET is the browser's confirmation step:
    a page that asks first, and posts here (it works without script)."""
    if asked.request.method in ("GET", "HEAD"):
        job = status.job_status(tenant_id=asked.tenant_id, job_id=job_id).job  # foreign ids: the same 404
        return confirm_cancel(asked, {"job": job, "cancellable": not job.is_terminal and not job.cancel_requested_at,
                                     "action": reverse("job_cancel", args=[job_id]),
                                     "back": schemas.status_url(job_id)})
    outcome = submissions.cancel(asked, job_id)
    if not asked.wants_json:
        return see_other(schemas.status_url(job_id))
    found = status.job_status(tenant_id=asked.tenant_id, job_id=job_id)
    return asked.json(schemas.Job.of(found.job, found.events, work=status.work_of([found.job]).get(job_id)),
                     status=202 if outcome.state == Job.State.LEASED else 200)


@edge.endpoint("GET", "HEAD", "POST")
def batch_cancel(asked: EdgeRequest, batch: str) -> HttpResponse:
    """Cancel every document of a batch that has not finished; back to the batch's page. A GET
    asks first (the confirmation page)."""
    found = status.batch_status(tenant_id=asked.tenant_id, batch=batch)
    if asked.request.method in ("GET", "HEAD"):
        return confirm_cancel(asked, {"batch": found, "cancellable": found.cancellable,
                                     "action": reverse("batch_cancel", args=[batch]),
                                     "back": reverse("batch_detail", args=[batch])})
    for job in found.jobs:
        if not job.is_terminal:
            with contextlib.suppress(edge.HttpError):  # it finished meanwhile: nothing to cancel
                submissions.cancel(asked, job.pk)
    return see_other(reverse("batch_detail", args=[batch]))


def confirm_cancel(asked: EdgeRequest, context: dict[str, object]) -> HttpResponse:
    """The page that asks before a cancel; API clients POST at once, so they get 405 here."""
    if asked.wants_json:
        raise HttpError(405, "method_not_allowed", "POST to cancel")
    return asked.page("web/cancel_confirm.html", context)


@edge.endpoint("POST")
def job_again(asked: EdgeRequest, job_id: int) -> HttpResponse:
    """Submit a failed job's document again, as a new job."""
    acceptance = submissions.submit_again(asked, job_id)
    return see_other(schemas.status_url(acceptance.job.pk))


@edge.endpoint("GET", "HEAD")
def job_new(asked: EdgeRequest) -> HttpResponse:
    return render_form(asked.request)


@edge.endpoint("GET", "HEAD")
def batch_detail(asked: EdgeRequest, batch: str) -> HttpResponse:
    found = status.batch_status(tenant_id=asked.tenant_id, batch=batch)
    polls = polling.poll_count(asked.request.GET.get("poll"))
    delay = polling.batch_poll_delay(polls) if found.live else (
        polling.SETTLING_POLL_SECONDS if found.settling else None)
    refused = (asked.request.session.get(REFUSED_SESSION_KEY.format(batch=batch), [])
               if asked.identity.via == "session" else [])
    waiting = next((job for job in found.jobs if job.state == Job.State.QUEUED), None)
    return asked.page("web/batch_detail.html", {
        "batch": found, "refused": refused, "delay": delay, "next_poll": polls + 1,
        "delay_notice": queue_delay(waiting.kind) if waiting else "",
        "duplicates": status.duplicates_of(found.jobs), "csv": csv_format(asked),
    }, partial="progress")


@edge.endpoint("GET", "HEAD")
def batch_export(asked: EdgeRequest, batch: str, extension: str = "csv") -> HttpResponse:
    found = status.batch_status(tenant_id=asked.tenant_id, batch=batch)
    jobs = (Job.objects.filter(pk__in=[job.pk for job in found.jobs]).select_related("document")
            .only(*status.LIST_FIELDS, "result").order_by("id"))
    return export_response(asked, exports.export(jobs, zone=export_zone(asked), link=job_link(asked)),
                           f"batch-{batch}", extension)


def export_response(asked: EdgeRequest, export: exports.Export, what: str, extension: str) -> HttpResponse:
    """An export as a download: an .xlsx workbook, or CSV in the format the reader chose
    (``sep``) or her browser's language implies (``exports.csv_format``)."""
    filename = exports.export_filename(export.zone, queue_clock.now(), what, extension)
    if extension == "xlsx":
        response = HttpResponse(exports.xlsx_bytes(export), content_type=XLSX_TYPE)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
    return csv_response(export, filename, csv_format(asked))


def csv_format(asked: EdgeRequest) -> exports.CsvFormat:
    return exports.csv_format(asked.request.GET.get("sep", "") or asked.request.POST.get("sep", ""),
                              asked.request.headers.get("Accept-Language", ""))


XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def csv_response(export: exports.Export, filename: str, fmt: exports.CsvFormat = exports.COMMA) -> HttpResponse:
    response = HttpResponse(exports.csv_text(export, fmt), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def attachment(body: str, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def download_name(job: Job) -> str:
    """A file name from the document's, safe in a header: letters, digits, - and _ only."""
    stem = original_name(job).rsplit(".", 1)[0]
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "-" for c in stem).strip("-")[:60]
    return f"{cleaned}-job-{job.pk}" if cleaned else f"job-{job.pk}"


def csrf_failure(request: HtmxHttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: a failed check answered like any other error (JSON or the error page)."""
    return edge.error_response(request, HttpError(403, "csrf_failed", f"CSRF check failed: {reason}"))


def see_other(url: str) -> HttpResponse:
    """303: a reload of the page we land on is a GET, never a second POST."""
    response = HttpResponseRedirect(url)
    response.status_code = 303
    return response


@require_GET
def openapi_json(request: HttpRequest) -> HttpResponse:
    return JsonResponse(openapi())
