"""What apps register: an answer per kind or one for the site, a default for the rest, lent to tests."""

import pytest

from jobs.registry import KindRegistry, SiteHook


def test_a_kind_without_an_answer_gets_the_default_and_one_with_its_own():
    pages = KindRegistry[str]("pages", "generic")
    pages.register("invoice.review", "review pages")
    assert (pages.of("invoice.review"), pages.of("webhook.deliver")) == ("review pages", "generic")


def test_a_second_answer_for_a_kind_is_refused_and_the_same_one_again_is_not():
    triage = KindRegistry[object]("triage", None)
    mine = object()
    triage.register("invoice.review", mine)
    assert triage.register("invoice.review", mine) is mine  # AppConfig.ready() run twice
    with pytest.raises(ValueError, match=r"triage for job kind 'invoice\.review' already registered"):
        triage.register("invoice.review", object())
    assert triage.of("invoice.review") is mine


def test_a_lent_answer_ends_with_its_block_and_the_one_before_comes_back():
    pages = KindRegistry[str]("pages", "generic")
    pages.register("a", "own")
    with pages.registered("a", "lent"), pages.registered("b", "lent too"):
        assert (pages.of("a"), pages.of("b")) == ("lent", "lent too")
    assert (pages.of("a"), pages.of("b")) == ("own", "generic")


def test_a_site_hook_answers_its_default_until_one_answer_is_registered_and_refuses_a_second():
    hook: SiteHook[str] = SiteHook("a pane", "none")
    assert hook.get() == "none"
    first = "the product's"
    assert hook.register(first) is first and hook.get() is first
    hook.register(first)  # the same again: apps can be made ready twice in one process
    with pytest.raises(ValueError, match="a pane is already registered"):
        hook.register("another")
    with hook.registered("a test's") as lent:
        assert hook.get() == lent == "a test's"
    assert hook.get() is first
