"""Staff see a job's document beside its result only when granted ``view_document``: triage alone
does not bring it. The pages open on request, never by merely opening the job, and each opening
and each download is logged."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission

from jobs.admin import kind_triage
from tests.web.conftest import review_document
from web.admin_document import AdminDocumentPane

from .conftest import CHANGELIST

PDF = Path(__file__).resolve().parent.parent / "corpus" / "multilingual" / "fr" / "03-panel.pdf"


@pytest.fixture
def reviewed_pdf(alice):
    return review_document(alice, PDF.read_bytes(), "facture.pdf")


@pytest.fixture
def document_viewer(make_member):
    """A triage member someone also granted view_document."""
    user = make_member("ops", "reader", staff=True)
    user.user_permissions.add(Permission.objects.get(content_type__app_label="jobs", codename="view_document"))
    return user


def test_triage_alone_neither_sees_nor_reaches_the_document(client, triager, reviewed_pdf):
    client.force_login(triager)
    page = f"{CHANGELIST}{reviewed_pdf.pk}/change/"
    for url in (page, f"{page}?document=1", f"{page}?page=1"):
        text = client.get(url).content.decode()
        assert 'id="show-document"' not in text and 'id="document"' not in text and "/pages/" not in text
    assert client.get(f"{CHANGELIST}{reviewed_pdf.pk}/pages/1.png").status_code == 403
    assert client.get(f"{CHANGELIST}{reviewed_pdf.pk}/document/").status_code == 403
    assert not LogEntry.objects.exists()


def test_staff_granted_view_document_open_its_pages_and_each_look_is_logged(client, document_viewer, reviewed_pdf):
    job = reviewed_pdf
    client.force_login(document_viewer)
    page = f"{CHANGELIST}{job.pk}/change/"
    opening = client.get(page).content.decode()
    assert 'id="show-document"' in opening and 'id="document"' not in opening
    assert not LogEntry.objects.exists()  # opening the job is not looking at the document

    shown = client.get(f"{page}?document=1").content.decode()
    assert f'src="{CHANGELIST}{job.pk}/pages/1.png"' in shown
    assert "admin-document.css" in shown and "document.js" in shown  # the pane brings its own media
    assert '<rect id="box-invoice_number"' in shown and "style=" not in shown[shown.index('id="document"'):]
    assert f'href="{CHANGELIST}{job.pk}/document/"' in shown
    image = client.get(f"{CHANGELIST}{job.pk}/pages/1.png")
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    assert "private" in image["Cache-Control"]
    assert client.get(f"{CHANGELIST}{job.pk}/pages/2.png").status_code == 404

    download = client.get(f"{CHANGELIST}{job.pk}/document/")
    assert download["Content-Type"] == "application/pdf"
    assert download["Content-Disposition"] == 'attachment; filename="facture.pdf"'
    assert [e.change_message for e in LogEntry.objects.filter(object_id=str(job.pk)).order_by("id")] == [
        "Viewed the document's pages (facture.pdf).", "Downloaded the document (facture.pdf).",
    ]


def test_without_a_registered_pane_the_page_offers_the_download_alone(client, document_viewer, reviewed_pdf):
    """The queue includes none of the product's templates: a site that registers no document
    pane shows no pages and offers no link to them, and the download still works."""
    page = f"{CHANGELIST}{reviewed_pdf.pk}/change/"
    client.force_login(document_viewer)
    with kind_triage.document_pane_registered(kind_triage.NO_DOCUMENT_PANE):
        for url in (page, f"{page}?document=1"):
            text = client.get(url).content.decode()
            assert 'id="show-document"' not in text and 'id="document"' not in text and "/pages/1.png" not in text
            assert "document.js" not in text
            assert f'href="{CHANGELIST}{reviewed_pdf.pk}/document/"' in text
        assert client.get(f"{CHANGELIST}{reviewed_pdf.pk}/document/").status_code == 200
    assert isinstance(kind_triage.document_pane(), AdminDocumentPane)  # the product's again


def test_one_pane_a_site():
    with pytest.raises(ValueError, match="already registered"):
        kind_triage.register_document_pane(AdminDocumentPane())
