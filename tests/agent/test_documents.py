"""Reading documents: the streaming DOCX reader, the limits' room for real invoices, standalone XML."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from pypdf import PdfReader

from agent import samples
from agent.reading import documents, fields
from documents.errors import DocumentTooComplex, UnsupportedDocument
from tests import hostile

W = hostile.W_NS


def docx_text(body: str) -> str:
    return documents.read_text(hostile.docx(body.encode()), documents.DOCX).text


def test_the_docx_reader_reads_what_python_docx_reads():
    import docx

    document = docx.Document()
    document.add_paragraph("Supplier: Nordlicht GmbH")
    table = document.add_table(rows=2, cols=2)
    for row, (label, value) in zip(table.rows, [("IBAN", "NL91 ABNA 0417 1643 00"), ("Total due", "EUR 12.00")],
                                   strict=True):
        row.cells[0].text, row.cells[1].text = label, value
    document.add_paragraph("Thank you")
    out = io.BytesIO()
    document.save(out)

    text = documents.read_text(out.getvalue(), documents.DOCX).text
    expected = [p.text for p in document.paragraphs]
    expected += ["  ".join(cell.text for cell in row.cells) for row in table.rows]
    assert all(line in text.splitlines() for line in expected), text
    # In document order, so a table's rows stay between the paragraphs around it.
    assert text.index("Supplier") < text.index("IBAN  NL91") < text.index("Thank you")
    assert fields.find(text, "iban") == "NL91 ABNA 0417 1643 00"
    assert fields.find(text, "total_amount") == "EUR 12.00"


def test_runs_tabs_and_breaks_are_read_as_text_and_tab_stops_are_not():
    text = docx_text(
        '<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr>'
        '<w:r><w:t>Invoice</w:t></w:r><w:r><w:t xml:space="preserve"> no</w:t><w:tab/><w:t>INV-7</w:t></w:r>'
        '<w:r><w:br/><w:t>second line</w:t></w:r></w:p>')
    assert text == "Invoice no\tINV-7\nsecond line\n"


def test_paragraphs_in_one_table_cell_stay_in_the_cell():
    text = docx_text('<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Bank</w:t></w:r></w:p><w:p><w:r><w:t>IBAN</w:t></w:r></w:p>'
                     '</w:tc><w:tc><w:p><w:r><w:t>DE89 3704 0044 0532 0130 00</w:t></w:r></w:p></w:tc></w:tr></w:tbl>')
    assert text == "Bank\nIBAN  DE89 3704 0044 0532 0130 00\n"


def test_alternate_content_is_read_once():
    mc = "http://schemas.openxmlformats.org/markup-compatibility/2006"
    text = docx_text(f'<w:p><w:r><mc:AlternateContent xmlns:mc="{mc}">'
                     '<mc:Choice Requires="wps"><w:t>Total: 5</w:t></mc:Choice>'
                     '<mc:Fallback><w:t>Total: 5</w:t></mc:Fallback></mc:AlternateContent></w:r></w:p>')
    assert text == "Total: 5\n"


def test_blank_paragraphs_do_not_fill_the_text_limit():
    text = docx_text("<w:p/>" * 150_000 + "<w:p><w:r><w:t>IBAN: DE89 3704 0044 0532 0130 00</w:t></w:r></w:p>")
    assert text == "\n\nIBAN: DE89 3704 0044 0532 0130 00\n"


def test_docx_text_stops_at_the_text_limit(monkeypatch):
    monkeypatch.setattr(documents, "MAX_PAGES", 1_000)  # the page limit would refuse it first
    line = "Delivery note line " + "x" * 81  # 100 characters and a newline
    read = documents.read_text(hostile.docx(hostile.paragraphs(*[line] * 2_000)), documents.DOCX)
    assert len(read.text) == documents.MAX_TEXT_CHARS
    assert read.warnings == [f"text cut to the first {documents.MAX_TEXT_CHARS} characters"]


def test_a_docx_just_inside_the_page_limit_is_read_whole():
    line = "x" * 99
    read = documents.read_text(hostile.docx(hostile.paragraphs(*[line] * 590)), documents.DOCX)
    assert (len(read.text), read.pages, read.warnings) == (59_000, 20, [])


# --- the limits leave real invoices room ----------------------------------------------


def test_the_sample_docx_is_far_inside_every_docx_limit():
    content = samples.DOCX.read_bytes()
    infos = zipfile.ZipFile(io.BytesIO(content)).infolist()
    assert len(infos) * 20 < documents.MAX_DOCX_PARTS
    assert sum(i.file_size for i in infos) * 20 < documents.MAX_DOCX_UNPACKED_BYTES
    assert max(i.file_size for i in infos) * 20 < documents.MAX_DOCX_PART_BYTES
    assert max(i.file_size / i.compress_size for i in infos) * 5 < documents.MAX_DOCX_RATIO
    reader = documents.DocxText()
    parser = reader.parser()
    parser.Parse(zipfile.ZipFile(io.BytesIO(content)).read("word/document.xml"), True)
    assert reader.elements * 100 < documents.MAX_DOCX_ELEMENTS


@pytest.mark.parametrize("sample", [samples.CLEAN_PDF, samples.SCANNED_PDF, samples.TOO_MANY_PAGES_PDF])
def test_the_sample_pdfs_are_far_inside_the_object_limit(sample):
    reader = PdfReader(sample)
    objects = sum(len(table) for table in reader.xref.values()) + len(reader.xref_objStm)
    assert objects * 100 < documents.MAX_PDF_OBJECTS
    assert len(reader.pages) * 10 < documents.PDF_PAGE_TREE_NODES


def test_a_docx_over_the_ratio_limit_only_for_a_part_under_a_megabyte_is_accepted():
    # Small parts may pack as well as they like (styles often pack 30 to 1): they stay small.
    small = hostile.docx(hostile.paragraphs("Invoice no: 1"), extra={"word/styles.xml": b" " * 900_000})
    assert documents.check_document(content=small, name="x.docx", content_type="") == documents.DOCX


# --- Standalone e-invoice XML -----------------------------------------------------------

EINVOICE = (Path(__file__).resolve().parent.parent / "corpus" / "einvoices" / "xml" / "EN16931_Einfach.ubl.xml")


@pytest.mark.parametrize("content, media_type", [
    (b'<?xml version="1.0" encoding="UTF-8"?>\n<Invoice/>', documents.XML),
    (b"\xef\xbb\xbf \r\n\t<rsm:CrossIndustryInvoice/>", documents.XML),
    (b"<!-- exported -->\n<Invoice/>", documents.XML),
    (b"<!DOCTYPE x><x/>", documents.XML),  # sniffed as XML so acceptance can refuse it in words
    (b"< 5 items at 3.00\nTotal: 15.00", documents.TEXT),
    (b"<= 30 days\nInvoice number: 7", documents.TEXT),
    (b"<?xmlfoo no declaration", documents.TEXT),
    (b"Invoice <b>7</b>", documents.TEXT),
], ids=["declaration", "bom and blanks", "comment", "doctype", "less than", "less or equal", "not a declaration",
        "tags later"])
def test_xml_is_sniffed_before_text_and_a_text_starting_with_a_bracket_stays_text(content, media_type):
    assert documents.sniff(content) == media_type


def test_a_standalone_e_invoice_is_accepted_and_has_no_visible_page(review_job):
    content = EINVOICE.read_bytes()
    assert documents.check_document(content=content, name="x.xml", content_type="text/xml") == documents.XML
    job = review_job(content)
    assert job.document.content_type == documents.XML
    # No visible page, so no "looks scanned" warning: agent.reading.einvoice reads its data.
    assert documents.read_text(content, documents.XML) == documents.Text("", 1, [])


def test_an_xml_declaring_a_dtd_is_refused_at_acceptance_with_the_formats_accepted(review_job):
    laughs = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>'
              b"<Invoice>&lol2;</Invoice>")
    with pytest.raises(UnsupportedDocument) as refused:
        review_job(laughs)
    assert refused.value.message == (
        "the XML declares a document type (DTD), which e-invoices never do; send PDF, DOCX, plain text (UTF-8), "
        "an e-invoice XML (UN/CEFACT CII or UBL 2.1), or a scan or photo (PNG, JPEG or TIFF)")
    assert (refused.value.status, refused.value.code) == (415, "unsupported_media_type")


def test_an_unsupported_document_is_told_which_formats_are_accepted():
    with pytest.raises(UnsupportedDocument, match=r"send PDF, DOCX, plain text \(UTF-8\), an e-invoice XML "
                                                  r"\(UN/CEFACT CII or UBL 2.1\), or a scan or photo \(PNG, JPEG or "
                                                  r"TIFF\)"):
        documents.check_document(content=b"GIF89a\x01\x00\x01\x00\x00", name="x.gif", content_type="image/gif")


def test_a_pdf_to_rebuild_from_too_many_objects_is_refused_before_pypdf_reads_it():
    import time

    content = hostile.pdf_to_rebuild()
    assert len(content) <= documents.MAX_DOCUMENT_BYTES
    started = time.process_time()
    with pytest.raises(DocumentTooComplex, match=r"the PDF has 2\d\d,\d{3} objects; at most 50,000 are "
                                                           "accepted"):
        documents.check_document(content=content, name="x.pdf", content_type="application/pdf")
    assert time.process_time() - started < 0.1
