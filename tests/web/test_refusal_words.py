"""The submit form words a refusal by its code and reason (jobs.errors.Reason), never by the
message the refusing check wrote: rewording a message in agent/ leaves the form's copy as it was,
while API clients get the new words under the same code."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

import agent.reading.documents
from jobs.models import Job

from .responses import csrf_token, form_key

REWORDED = {
    "NO_INPUT": "Bitte ein Dokument oder einen Text senden",
    "INPUT_TWICE": "Dokument und Text zugleich: not both, send a document, or",  # the old phrases, elsewhere
    "UNRECOGNISED": "Dateityp unbekannt",
}
UNRECOGNISED_COPY = ("This file is not a PDF, a Word document (.docx), a text file or an e-invoice (XML), nor a "
                     "scan or photo (PNG, JPEG, TIFF).")


def refusals(html: str) -> dict[str, str]:
    """Each field's refusal as the form shows it, without tags."""
    found = re.findall(r'<(?:p|ul) class="field-error" id="error-(\w+)">(.*?)</(?:p|ul)>', html, re.S)
    return {name: re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", text)).strip() for name, text in found}


def submit(browser_client, alice, **data) -> dict[str, str]:
    client = browser_client(alice)
    page = client.get("/jobs/new")
    fields = {"kind": "document_review", "idempotency_key": form_key(page),
              "csrfmiddlewaretoken": csrf_token(client, page)}
    response = client.post("/jobs", {**fields, **data})
    assert response.status_code in (400, 415) and not Job.objects.exists()
    return refusals(response.content.decode())


CASES = {
    "nothing to review": ({}, {"text": "Choose a file, or paste the text of a document."}),
    "a file and text": ({"payload": '{"text": "Supplier: ACME"}', "document": "invoice.txt"},
                        {"text": "Send a file or pasted text in the advanced options, not both."}),
    "an unknown kind of file": ({"document": "blob.bin"}, {"document": f"blob.bin: {UNRECOGNISED_COPY}"}),
}


def files(name: str) -> SimpleUploadedFile:
    content = b"Supplier: ACME GmbH\nInvoice number: 7" if name.endswith(".txt") else b"\x00\x01\x02\x03binary"
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("reworded", [False, True], ids=["as written", "reworded"])
def test_the_forms_copy_is_chosen_by_the_code_not_the_message(browser_client, alice, monkeypatch, case, reworded):
    if reworded:
        for name, words in REWORDED.items():
            monkeypatch.setattr(agent.reading.documents.rules, name, words)
    data, expected = CASES[case]
    if "document" in data:
        data = {**data, "document": files(data["document"])}
    assert submit(browser_client, alice, **data) == expected


def test_api_clients_get_the_reworded_message_under_the_same_code(api_client, alice, monkeypatch):
    monkeypatch.setattr(agent.reading.documents.rules, "NO_INPUT", REWORDED["NO_INPUT"])
    response = api_client(alice).post("/jobs", {"kind": "document_review", "payload": {}},
                                      content_type="application/json", headers={"Idempotency-Key": "k-1"})
    body = response.json()
    assert (response.status_code, body["error"], body["detail"]) == (400, "invalid_payload", REWORDED["NO_INPUT"])


def test_text_that_cannot_be_stored_and_text_too_long_are_said_by_their_reason(browser_client, alice):
    client = browser_client(alice)
    page = client.get("/jobs/new")
    fields = {"kind": "webtest.echo", "idempotency_key": form_key(page),
              "csrfmiddlewaretoken": csrf_token(client, page)}
    nul = refusals(client.post("/jobs", {**fields, "text": "Supplier\x00ACME"}).content.decode())
    long = refusals(client.post("/jobs", {**fields, "text": "x" * 4001}).content.decode())
    assert nul == {"text": "The pasted text contains characters that cannot be stored. Paste it again as plain text."}
    assert long == {"text": "The pasted text is too long: at most 4,000 characters."}
