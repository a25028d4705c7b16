"""PDFs whose text sits where a test puts it."""

from __future__ import annotations

from pathlib import Path

# An e-invoice whose XML carries an IBAN (DE88 2008 …).
WITH_IBAN = (Path(__file__).resolve().parent / "corpus" / "einvoices" / "invalid"
             / "Mustangproject__MustangGnuaccountingBeispielRE-20190610_507a.pdf")


def make_pdf(items: list[tuple[float, float, str]], *, pages: int = 1, size: float = 10) -> bytes:
    """A PDF with each text at (x, y) in points from the top-left corner, on every page."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.set_font("Helvetica", size=size)
    for _ in range(pages):
        pdf.add_page()
        for x, y, text in items:
            pdf.text(x, y, text)
    return bytes(pdf.output())


def factur_x_with_page(lines: list[str]) -> bytes:
    """A Factur-X PDF whose visible page prints ``lines`` and whose XML is WITH_IBAN's (IBAN DE88 2008 …)."""
    import facturx
    from fpdf import FPDF

    from agent.reading import einvoice

    found = einvoice.find_xml(WITH_IBAN.read_bytes(), "application/pdf")
    assert found is not None
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    for line in lines:
        pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    return facturx.generate_from_binary(bytes(pdf.output()), found[1], check_xsd=False)


CHANGED_IBAN_PAGE = ["Supplier: Bei Spiel GmbH", "VAT ID: DE136695976", "Invoice number: RE-20190610/507",
                     "Invoice date: 10 June 2019", "Total due: EUR 571.04", "IBAN: NL91 ABNA 0417 1643 00"]
