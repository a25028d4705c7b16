"""PDFs whose text sits where a test puts it."""

from __future__ import annotations


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
