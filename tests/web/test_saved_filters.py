"""Saved filters: a member keeps the list's filters under a name and picks them again; what is kept
is the list's own validated query; each member sees, replaces and deletes only her own."""

from __future__ import annotations

import re

import pytest

from web.models import MAX_SAVED, SavedFilter

from .responses import csrf_token


@pytest.fixture
def on_list(browser_client):
    """A member's client on her list, and a poster of the list's forms with the page's CSRF token."""

    def make(user):
        client = browser_client(user)
        token = csrf_token(client, client.get("/jobs"))

        def post(path: str, data: dict):
            return client.post(path, {**data, "csrfmiddlewaretoken": token})

        return client, post

    return make


def chips(html: str) -> list[tuple[str, str, bool]]:
    return [(name, href.replace("&amp;", "&"), bool(current)) for href, current, name in re.findall(
        r'<li class="saved-filter"><a href="\?([^"]*)" title="[^"]*"( aria-current="true")?>([^<]*)</a>', html)]


def test_a_member_saves_the_lists_filters_and_picks_them_again(on_list, alice):
    client, post = on_list(alice)
    page = client.get("/jobs?state=completed&q=Müller&sort=-total&page=3").content.decode()
    kept = re.search(r'name="query" value="([^"]*)"', page).group(1).replace("&amp;", "&")
    assert kept == "state=completed&q=M%C3%BCller&sort=-total"  # the list's query, without the page
    response = post("/jobs/filters", {"name": "  Müller,   largest first ", "query": kept})
    assert response.status_code == 303 and response["Location"] == f"/jobs?{kept}"
    shown = client.get(response["Location"]).content.decode()
    assert "Saved as “Müller, largest first”." in shown
    assert chips(shown) == [("Müller, largest first", kept, True)]
    assert chips(client.get("/jobs").content.decode()) == [("Müller, largest first", kept, False)]

    # The same name again keeps the new filters in its place.
    post("/jobs/filters", {"name": "Müller, largest first", "query": "state=dead"})
    assert list(SavedFilter.objects.values_list("name", "query")) == [("Müller, largest first", "state=dead")]


@pytest.mark.parametrize(("name", "query", "said"), [
    ("   ", "state=completed", "Give these filters a name to save them."),
    ("x" * 61, "state=completed", "A name of at most 60 characters, please."),
    ("Broken", "state=nonsense", "These filters could not be read, so they were not saved."),
    ("Broken day", "since=2024-13-45", "These filters could not be read, so they were not saved."),
])
def test_a_filter_without_a_name_or_that_the_list_cannot_read_is_not_kept(on_list, alice, name, query, said):
    client, post = on_list(alice)
    response = post("/jobs/filters", {"name": name, "query": query})
    assert response.status_code == 303 and SavedFilter.objects.count() == 0
    assert said in client.get(response["Location"]).content.decode()


def test_a_member_keeps_at_most_so_many(on_list, alice):
    client, post = on_list(alice)
    for n in range(MAX_SAVED):
        post("/jobs/filters", {"name": f"Filter {n}", "query": f"q={n}"})
    response = post("/jobs/filters", {"name": "One more", "query": "q=more"})
    assert SavedFilter.objects.count() == MAX_SAVED
    assert "the most one can keep: delete one first" in client.get(response["Location"]).content.decode()


def test_each_member_sees_and_deletes_only_her_own(on_list, alice, bob, make_member):
    carol = make_member(alice.tenant.slug, "carol")  # alice's teammate
    _, alice_posts = on_list(alice)
    alice_posts("/jobs/filters", {"name": "Mine", "query": "state=completed"})
    saved = SavedFilter.objects.get()
    assert (saved.tenant_id, saved.user_id) == (alice.tenant_id, alice.pk)

    for other in (carol, bob):  # a teammate and another team: neither sees it, nor can delete it
        client, post = on_list(other)
        assert chips(client.get("/jobs").content.decode()) == []
        assert post(f"/jobs/filters/{saved.pk}/delete", {}).status_code == 404
    assert SavedFilter.objects.count() == 1

    client, post = on_list(alice)
    response = post(f"/jobs/filters/{saved.pk}/delete", {})
    assert response.status_code == 303 and SavedFilter.objects.count() == 0
    assert "The saved filters “Mine” are deleted." in client.get(response["Location"]).content.decode()
