"""A standalone XML declares the encoding it is read in: UTF-8 or UTF-16 only, checked at
acceptance, so that the byte scan for a DTD reads what the parser will read (a DOCTYPE in
UTF-7 is ``+ADw-!DOCTYPE``: no ``<!DOCTYPE`` in its bytes)."""

from __future__ import annotations

import pytest

from agent.reading import documents
from documents.errors import UnsupportedDocument

INVOICE = b"<Invoice xmlns='urn:oasis:names:specification:ubl:schema:xsd:Invoice-2'/>"


def check(content: bytes) -> str:
    return documents.check_document(content=content, name="invoice.xml", content_type="application/xml")


def test_a_doctype_in_utf7_is_refused_at_acceptance():
    # "<" and ">" written as UTF-7 may write them (Python's codec leaves them as they are).
    doctype = b"<!DOCTYPE x [<!ENTITY e SYSTEM 'file:///etc/passwd'>]>".replace(b"<", b"+ADw-").replace(b">", b"+AD4-")
    assert doctype.decode("utf-7").startswith("<!DOCTYPE x [<!ENTITY")
    assert b"<!DOCTYPE" not in doctype  # what the byte scan for a DTD does not see
    content = b'<?xml version="1.0" encoding="UTF-7"?>' + doctype + INVOICE
    with pytest.raises(UnsupportedDocument, match="declares the encoding 'UTF-7'"):
        check(content)


@pytest.mark.parametrize("declaration", [
    b"<?xml version='1.0' encoding='ISO-8859-1'?>", b'<?xml version="1.0" encoding = "ebcdic-cp-us" ?>',
    b"<?xml version='1.0' encoding='utf-7' standalone='yes'?>", b"<?xml version='1.0' encoding='x\"?>",
], ids=["latin-1", "ebcdic", "utf-7 lower case", "unreadable"])
def test_an_xml_declaring_any_encoding_but_utf8_or_utf16_is_refused_and_says_so(declaration):
    with pytest.raises(UnsupportedDocument, match="UTF-8"):
        check(declaration + INVOICE)


@pytest.mark.parametrize("declaration", [
    b"", b'<?xml version="1.0"?>', b'<?xml version="1.0" encoding="UTF-8"?>', b"\xef\xbb\xbf<?xml version='1.0' "
    b"encoding='utf-8'?>", b"<?xml version='1.0' encoding='UTF8'?>", b'<?xml version="1.0" encoding="UTF-16"?>',
], ids=["none", "no encoding", "UTF-8", "BOM and utf-8", "UTF8", "UTF-16"])
def test_an_xml_in_utf8_or_without_a_declared_encoding_is_accepted(declaration):
    assert check(declaration + INVOICE) == documents.XML
