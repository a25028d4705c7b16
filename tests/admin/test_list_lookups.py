"""The staff job list filters by what it declares, and by nothing a query string makes up.

Django's default lets any lookup on the job's own fields through the query string: that
would search the tenants' inline text (``?payload__text__icontains=``), or break on a
store that lacks the lookup (``payload__contains`` on SQLite).
"""

from __future__ import annotations

import pytest

from .conftest import CHANGELIST

FORGED = [
    "payload__text__icontains=Confidential",
    "payload__text__icontains=",
    "payload__contains=x",
    "payload__has_key=text",
    "result__icontains=ACME",
    "last_error__icontains=boom",
    "submitted_by__password__startswith=md5",
    "submitted_by__username=alice",
    "operation_key=op-1",
    "state__in=dead,unknown",
    "scope__slug=acme",
]


@pytest.fixture
def confidential(in_state, progress_kind):
    return in_state("dead", kind="test.review", payload={"text": "Confidential supplier letter"})


@pytest.mark.parametrize("query", FORGED)
def test_a_lookup_the_list_does_not_declare_is_refused_with_400(client, triager, superuser, confidential, query):
    for staff in (triager, superuser):
        client.force_login(staff)
        response = client.get(f"{CHANGELIST}?{query}")
        assert response.status_code == 400, (staff, query)
        assert b"Confidential" not in response.content


def test_the_search_box_matches_ids_keys_and_file_names_never_payload_text(client, triager, confidential):
    client.force_login(triager)
    assert list(client.get(CHANGELIST, {"q": "Confidential"}).context["cl"].result_list) == []
    assert list(client.get(CHANGELIST, {"q": "supplier letter"}).context["cl"].result_list) == []


def test_every_choice_of_every_declared_filter_still_works(client, triager, in_state, make_member):
    jobs = {state: in_state(state) for state in ("dead", "unknown", "queued", "completed")}
    in_state("completed", user=make_member("acme", "carol"))  # a second submitter: the filter shows
    client.force_login(triager)
    cl = client.get(CHANGELIST).context["cl"]
    titles = [spec.title for spec in cl.filter_specs]
    assert titles == ["state", "scope", "submitted by", "kind", "age"]
    visited = 0
    for spec in cl.filter_specs:
        for choice in spec.choices(cl):
            response = client.get(f"{CHANGELIST}{choice['query_string']}")
            assert response.status_code == 200, choice["query_string"]
            visited += 1
    assert visited >= 5 + 7  # "All" of each filter, and the states (with "needs a human")

    combined = client.get(CHANGELIST, {"state": "needs_human", "scope__id__exact": jobs["dead"].scope_id,
                                       "submitted_by__id__exact": jobs["dead"].submitted_by_id,
                                       "kind": "diagnostic.sleep", "age": "1h"})
    assert set(combined.context["cl"].result_list) == {jobs["dead"], jobs["unknown"]}
    other_scope = {"scope__id__exact": jobs["dead"].scope_id + 100}
    assert list(client.get(CHANGELIST, other_scope).context["cl"].result_list) == []
