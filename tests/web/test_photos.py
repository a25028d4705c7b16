"""Photos of a paper invoice's pages, taken with the phone's camera, sent as one document: a PDF
of them, a page each in the order taken, that the review's own check accepts; what cannot be a
page is refused by name and nothing is sent for it."""

from __future__ import annotations

import io
import struct

import pypdf
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from documents import rules
from documents.store import read
from jobs.models import Job
from web import photos

from .responses import csrf_token, form_key

COLOURS = [(200, 30, 30), (30, 160, 60), (40, 60, 200)]


def jpeg(colour=(200, 30, 30), size=(60, 80), orientation: int | None = None) -> bytes:
    out = io.BytesIO()
    image = Image.new("RGB", size, colour)
    if orientation is None:
        image.save(out, "JPEG", quality=90)
    else:
        exif = Image.Exif()
        exif[0x0112] = orientation
        image.save(out, "JPEG", quality=90, exif=exif.tobytes())
    return out.getvalue()


def png(mode="RGB", colour=(30, 160, 60), size=(50, 40)) -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, colour if mode != "RGBA" else (*colour, 128)).save(out, "PNG")
    return out.getvalue()


def pages_of(pdf: bytes) -> list[pypdf.PageObject]:
    return list(pypdf.PdfReader(io.BytesIO(pdf)).pages)


def drawn_colour(pdf: bytes, index: int) -> tuple[int, int, int]:
    """The colour at the middle of page ``index`` as a PDF renderer draws it."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        image = document[index].render(scale=0.5).to_pil().convert("RGB")
    finally:
        document.close()
    return image.getpixel((image.width // 2, image.height // 2))


def close(found, wanted, slack=24) -> bool:
    return all(abs(a - b) <= slack for a, b in zip(found, wanted, strict=True))


def test_three_photos_make_one_pdf_of_three_pages_in_the_order_taken():
    pdf = photos.photos_pdf([(f"IMG_{n}.jpg", jpeg(colour)) for n, colour in enumerate(COLOURS)])
    pages = pages_of(pdf)
    assert len(pages) == 3
    # Each page is its photo's shape, its long side an A4 sheet's height; the photos' data is kept as it came.
    assert [round(float(p.mediabox.height)) for p in pages] == [842] * 3
    assert round(float(pages[0].mediabox.width)) == round(842 * 60 / 80)
    for index, colour in enumerate(COLOURS):
        assert close(drawn_colour(pdf, index), colour), index
    assert jpeg(COLOURS[1]) in pdf  # a DCT stream: not decoded, not re-encoded


def test_a_png_photo_and_a_turned_jpeg_are_pages_too():
    pdf = photos.photos_pdf([("scan.png", png()), ("IMG_2.jpg", jpeg(orientation=6)),
                             ("IMG_3.jpg", jpeg(orientation=1))])
    pages = pages_of(pdf)
    assert close(drawn_colour(pdf, 0), (30, 160, 60))
    # EXIF orientation 6 (the phone held upright, the sensor sideways): the page is turned to read upright.
    assert [page.get("/Rotate") for page in pages] == [0, 90, 0]


@pytest.mark.parametrize(("photo", "said"), [
    (b"GIF89a" + b"\x00" * 40, "IMG_9.jpg is not a JPEG or PNG photo"),
    (png("RGBA"), "IMG_9.jpg is a PNG with transparency"),
    (jpeg()[:40], "IMG_9.jpg is damaged"),
    (b"\x89PNG\r\n\x1a\n" + struct.pack(">I4sIIBBBBB", 13, b"IHDR", 40_000, 40_000, 8, 2, 0, 0, 0) + b"\x00" * 4,
     "IMG_9.jpg declares 40,000 x 40,000 pixels"),
])
def test_a_photo_that_cannot_be_a_page_is_refused_by_its_name(photo, said):
    with pytest.raises(photos.PhotoRefused) as refused:
        photos.photos_pdf([("IMG_1.jpg", jpeg()), ("IMG_9.jpg", photo)])
    assert str(refused.value).startswith(said)


def test_more_photos_than_one_document_takes_are_refused():
    with pytest.raises(photos.PhotoRefused, match=f"at most {photos.MAX_PHOTOS} pages"):
        photos.photos_pdf([(f"IMG_{n}.jpg", b"") for n in range(photos.MAX_PHOTOS + 1)])


def test_the_combined_pdf_passes_the_reviews_own_check():
    kind = rules.of("document_review")
    pdf = photos.photos_pdf([(f"IMG_{n}.jpg", jpeg(colour)) for n, colour in enumerate(COLOURS)])
    checked = kind.check(content=pdf, name="IMG_0 (3 pages).pdf", content_type="application/pdf")
    assert checked == "application/pdf"


@pytest.fixture
def review_form(browser_client, alice):
    client = browser_client(alice)
    page = client.get("/jobs/new")
    html = page.content.decode()
    # The camera: a control that opens it, for photos, on the submit page.
    assert 'name="photo" type="file" accept="image/*" capture="environment" multiple' in html
    assert ">Take a photo</label>" in html
    return client, {"kind": "document_review", "idempotency_key": form_key(page),
                    "csrfmiddlewaretoken": csrf_token(client, page)}


def shots(*colours) -> list[SimpleUploadedFile]:
    return [SimpleUploadedFile(f"IMG_20241105_{n}.jpg", jpeg(c), content_type="image/jpeg")
            for n, c in enumerate(colours)]


def test_photos_sent_from_the_form_are_one_job_of_one_pdf_and_a_resend_makes_none(review_form):
    client, fields = review_form
    response = client.post("/jobs", {**fields, "photo": shots(*COLOURS)})
    job = Job.objects.get()
    assert response.status_code == 303 and response["Location"] == f"/jobs/{job.pk}"
    assert job.document.original_name == "IMG_20241105_0 (3 pages).pdf"
    assert job.document.content_type == "application/pdf"
    assert len(pages_of(read(job.document.name))) == 3 and not job.batch
    again = client.post("/jobs", {**fields, "photo": shots(*COLOURS)})  # a retry: the same job
    assert again["Location"] == f"/jobs/{job.pk}" and Job.objects.count() == 1


def test_photos_beside_chosen_files_are_one_more_document_of_the_batch(review_form):
    client, fields = review_form
    chosen = SimpleUploadedFile("invoice.txt", b"Invoice 1\nTotal: EUR 10.00", content_type="text/plain")
    client.post("/jobs", {**fields, "document": [chosen], "photo": shots(*COLOURS[:2])})
    jobs = list(Job.objects.order_by("id"))
    assert [j.document.original_name for j in jobs] == ["invoice.txt", "IMG_20241105_0 (2 pages).pdf"]
    assert jobs[0].batch and jobs[0].batch == jobs[1].batch


def test_a_photo_that_cannot_be_a_page_sends_nothing_and_says_which(review_form):
    client, fields = review_form
    bad = SimpleUploadedFile("IMG_0002.HEIC", b"\x00\x00\x00\x18ftypheic" + b"\x00" * 64, content_type="image/heic")
    response = client.post("/jobs", {**fields, "photo": [*shots(COLOURS[0]), bad]})
    html = response.content.decode()
    assert response.status_code == 400 and Job.objects.count() == 0
    assert 'id="error-photo"' in html and "IMG_0002.HEIC is not a JPEG or PNG photo" in html


def test_photos_over_the_document_limit_are_refused_before_they_are_read(review_form):
    client, fields = review_form
    limit = rules.max_bytes("webtest.echo")  # 4 KB: the web tests' own kind
    big = [SimpleUploadedFile(f"IMG_{n}.jpg", b"\xff\xd8\xff" + b"\x00" * (limit // 2), content_type="image/jpeg")
           for n in range(3)]
    response = client.post("/jobs", {**fields, "kind": "webtest.echo", "photo": big})
    assert response.status_code == 413 and Job.objects.count() == 0
    assert "These 3 photos add up to 6.1 KB; the limit is 4 KB per document." in response.content.decode()


# --- The API: the same photos as the pages of one document --------------------------------------


def test_photos_posted_to_the_api_are_one_document_and_a_resend_makes_none(api_client, alice):
    client = api_client(alice)
    sent = client.post("/jobs", {"kind": "document_review", "photo": shots(*COLOURS)},
                       headers={"Idempotency-Key": "phone-app-1"})
    job = Job.objects.get()
    assert sent.status_code == 202 and sent.json()["id"] == job.pk
    assert job.document.original_name == "IMG_20241105_0 (3 pages).pdf" and len(pages_of(read(job.document.name))) == 3
    again = client.post("/jobs", {"kind": "document_review", "photo": shots(*COLOURS)},
                        headers={"Idempotency-Key": "phone-app-1"})
    assert again.json()["id"] == job.pk and Job.objects.count() == 1


@pytest.mark.parametrize(("files", "error", "field"), [
    ({"document": [SimpleUploadedFile("a.txt", b"Invoice 1")], "photo": shots(COLOURS[0])}, "invalid", "photo"),
    ({"document": [SimpleUploadedFile("a.txt", b"Invoice 1"), SimpleUploadedFile("b.txt", b"Invoice 2")]},
     "too_many_files", "document"),
    ({"attachment": [SimpleUploadedFile("a.txt", b"Invoice 1")]}, "unknown_file", "attachment"),
    ({"photo": [*shots(COLOURS[0]), SimpleUploadedFile("IMG_2.HEIC", b"\x00\x00\x00\x18ftypheic" + b"\x00" * 64)]},
     "invalid_photo", "photo"),
])
def test_the_api_refuses_files_it_would_otherwise_leave_unread_by_their_field(api_client, alice, files, error,
                                                                              field):
    response = api_client(alice).post("/jobs", {"kind": "document_review", **files})
    assert response.status_code == 400 and Job.objects.count() == 0
    assert (response.json()["error"], response.json()["field"]) == (error, field)
