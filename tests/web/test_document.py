"""The document beside its review: page images kept once beside the stored document, served only
to the tenant's members, boxes where each value was read, and the original as a download."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from documents import store as document_store
from jobs.models import Job
from tests.conftest import name_document

from .conftest import review_document

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "multilingual"
TWO_PAGES = CORPUS / "de" / "06-twopage.pdf"  # the total, IBAN and BIC are on page 2
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def reviewed_pdf(alice):
    return review_document(alice, TWO_PAGES.read_bytes(), "Rechnung 06.pdf")


def test_the_review_keeps_an_image_of_each_page_beside_the_stored_document(reviewed_pdf):
    job = reviewed_pdf
    images = document_store.page_images(job.document.name)
    assert [image.number for image in images] == [1, 2]
    assert all(900 <= image.width <= 1100 and image.height > image.width for image in images)  # A4 at 120 dpi
    kept = document_store.pages_dir(job.document.name)
    assert kept.parent == document_store.path(job.document.name).parent
    assert sorted(p.name for p in kept.iterdir()) == ["1.png", "2.png", document_store.PAGES_MANIFEST]
    assert all(60_000 > (kept / f"{n}.png").stat().st_size > 5_000 for n in (1, 2))
    assert job.result["page_sizes"] == [[595.3, 841.9], [595.3, 841.9]]


def test_the_images_are_written_once_for_the_same_bytes(alice, reviewed_pdf):
    first = document_store.pages_dir(reviewed_pdf.document.name) / "1.png"
    written = first.stat().st_mtime_ns
    again = review_document(alice, TWO_PAGES.read_bytes(), "copy.pdf")
    assert again.document.name == reviewed_pdf.document.name
    assert first.stat().st_mtime_ns == written
    assert not document_store.store_page_images(again.document.name, [(PNG, 1, 1)])
    assert not list(first.parent.parent.glob(".incoming-pages-*"))


def test_the_owner_gets_each_page_as_a_private_png(browser_client, alice, reviewed_pdf):
    client = browser_client(alice)
    response = client.get(f"/jobs/{reviewed_pdf.pk}/pages/2.png")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content).startswith(PNG)
    assert "private" in response["Cache-Control"] and "no-store" in response["Cache-Control"]
    assert response["X-Content-Type-Options"] == "nosniff"
    assert client.get(f"/jobs/{reviewed_pdf.pk}/pages/3.png").status_code == 404
    assert client.get(f"/jobs/{reviewed_pdf.pk}/pages/0.png").status_code == 404


def test_the_owner_downloads_the_original_as_an_attachment_of_its_stored_type(browser_client, alice, reviewed_pdf):
    response = browser_client(alice).get(f"/jobs/{reviewed_pdf.pk}/document")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == 'attachment; filename="Rechnung 06.pdf"'
    assert b"".join(response.streaming_content) == TWO_PAGES.read_bytes()
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "private" in response["Cache-Control"]


def test_another_tenant_gets_the_same_404_as_for_a_job_that_does_not_exist(browser_client, api_client, bob,
                                                                         reviewed_pdf):
    missing = Job.objects.order_by("-pk").first().pk + 1000
    for client in (browser_client(bob), api_client(bob)):
        for path in ("", "/pages/1.png", "/document"):
            theirs, nobodys = client.get(f"/jobs/{reviewed_pdf.pk}{path}"), client.get(f"/jobs/{missing}{path}")
            assert theirs.status_code == nobodys.status_code == 404, path
            assert theirs.content == nobodys.content, path
            assert sorted(theirs.items()) == sorted(nobodys.items()), path


def test_anonymous_callers_get_nothing(client, reviewed_pdf):
    for path in ("/pages/1.png", "/document"):
        response = client.get(f"/jobs/{reviewed_pdf.pk}{path}", headers={"Accept": "text/html"})
        assert response.status_code in (302, 401), path
        assert not response.content.startswith(PNG)


def test_the_job_page_shows_the_pages_one_at_a_time_with_a_box_where_each_value_was_read(browser_client, alice,
                                                                                      reviewed_pdf):
    client = browser_client(alice)
    html = client.get(f"/jobs/{reviewed_pdf.pk}").content.decode()
    pane = html[html.index('<section id="document"'):]
    assert 'id="download-document"' in pane and f'href="/jobs/{reviewed_pdf.pk}/document"' in pane
    assert "Page 1 of 2" in pane
    assert re.search(r'<figure class="page" id="page-1" data-page="1" tabindex="-1">', pane)
    assert re.search(r'<figure class="page" id="page-2" data-page="2" tabindex="-1" hidden>', pane)
    # Each value found has a box on its page, and its "read from page N" links to it.
    total = re.search(r'<rect id="box-total_amount" class="box box-present" x="([\d.]+)" y="([\d.]+)" '
                      r'width="([\d.]+)" height="([\d.]+)"', pane)
    assert total and all(0 < float(v) < 100 for v in total.groups())
    assert pane.index('id="page-2"') < pane.index('id="box-total_amount"')  # the total is on page 2
    assert '<a href="?page=2#box-total_amount" data-show-box="box-total_amount">read from page 2</a>' in html
    assert 'style=' not in pane  # the CSP: positions are SVG attributes, never inline style
    # Without script, ?page=2 shows the second page.
    second = client.get(f"/jobs/{reviewed_pdf.pk}?page=2").content.decode()
    assert re.search(r'<figure class="page" id="page-1" data-page="1" tabindex="-1" hidden>', second)
    assert "Page 2 of 2" in second


def test_a_job_reviewed_before_pages_were_kept_says_so_and_serves_no_page(browser_client, alice, reviewed_pdf):
    document_store.delete(reviewed_pdf.document.name)  # the file too: as if pruned
    client = browser_client(alice)
    html = client.get(f"/jobs/{reviewed_pdf.pk}").content.decode()
    assert "There is no preview of this document&#x27;s pages: it was reviewed before previews were kept" in html
    assert 'data-show-box=' not in html  # no link to a box that is not drawn
    assert client.get(f"/jobs/{reviewed_pdf.pk}/pages/1.png").status_code == 404
    assert client.get(f"/jobs/{reviewed_pdf.pk}/document").status_code == 404


def test_a_text_document_has_no_pages_to_show_and_downloads_as_text(browser_client, alice):
    job = review_document(alice, b"Rechnung\nRechnungsnummer: 4711\n", "notes.txt")
    client = browser_client(alice)
    html = client.get(f"/jobs/{job.pk}").content.decode()
    assert "This kind of file has no pages to preview." in html
    response = client.get(f"/jobs/{job.pk}/document")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="notes.txt"'


def test_a_download_keeps_the_name_quoted_and_never_an_active_type(browser_client, alice, reviewed_pdf):
    name_document(reviewed_pdf.pk, 'Faktura "März"\r\n.pdf', content_type="text/html")
    response = browser_client(alice).get(f"/jobs/{reviewed_pdf.pk}/document")
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"] == "attachment; filename*=utf-8''Faktura%20%22M%C3%A4rz%22.pdf"
    assert document_store.download_type("image/svg+xml") == "application/octet-stream"
    assert document_store.download_type("application/pdf") == "application/pdf"
