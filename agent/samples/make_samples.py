"""Regenerate the sample invoices in this folder (the generated files are committed).

fpdf2 (and Pillow, which it brings) is needed only here, not at run time. Install it
somewhere throwaway and run from the project folder:

    .venv/bin/pip install --target /tmp/samplegen fpdf2
    PYTHONPATH=/tmp/samplegen .venv/bin/python agent/samples/make_samples.py

The oversized document is not committed: ``agent.samples.oversized_pdf()`` builds one
just over the limit when it is needed (the tests, ``--oversized PATH`` here).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

SUPPLIER = "Nordlicht Bürobedarf GmbH"
ADDRESS = ["Hafenstraße 12", "20457 Hamburg", "Germany"]
BUYER = ["Acme Logistics B.V.", "Accounts payable", "Keizersgracht 100", "1015 CX Amsterdam"]
LINES = [
    ("Recycled copy paper A4, 80 g (box of 5 reams)", 12, "24.90"),
    ("Ergonomic office chair, model Fjord", 2, "289.00"),
    ("Whiteboard markers, assorted (pack of 12)", 10, "8.45"),
    ("Desk lamp LED, dimmable", 4, "39.90"),
]


def invoice_lines(*, vat: str | None = "DE136695976", iban: str | None = "DE89 3704 0044 0532 0130 00",
                  number: str | None = "INV-2026-0142", date: str | None = "14 March 2026") -> list[str]:
    """The invoice as lines of text, with the chosen fields left out or spoiled."""
    net = sum(qty * float(price) for _, qty, price in LINES)
    vat_amount = round(net * 0.19, 2)
    total = net + vat_amount
    lines = [SUPPLIER, *ADDRESS, ""]
    lines.append(f"Supplier: {SUPPLIER}")
    if vat:
        lines.append(f"VAT ID: {vat}")
    lines += ["", "Bill to:", *BUYER, ""]
    if number:
        lines.append(f"Invoice no.: {number}")
    if date:
        lines.append(f"Invoice date: {date}")
    lines += ["Payment terms: 30 days net", "Currency: EUR", ""]
    for description, qty, price in LINES:
        lines.append(f"{qty:>3} x {description}  @ {price}  = {qty * float(price):,.2f}")
    lines += ["", f"Net amount: {net:,.2f}", f"VAT 19%: {vat_amount:,.2f}", f"Total due: EUR {total:,.2f}", ""]
    if iban:
        lines += ["Please pay to:", f"IBAN: {iban}", "BIC: COBADEFFXXX"]
    lines += ["", "Thank you for your order."]
    return lines


def write_pdf(path: Path, lines: list[str], *, pages: int = 1) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title("Invoice")
    for page in range(pages):
        pdf.add_page()
        pdf.set_font("Helvetica", size=10)
        body = lines if page == 0 else [f"Delivery note, page {page + 1}", *(
            f"Item {page * 40 + i}: {LINES[i % len(LINES)][0]}" for i in range(40))]
        for line in body:
            pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


def write_scanned_pdf(path: Path, lines: list[str]) -> None:
    """An image-only PDF (a scan): the invoice drawn as pixels, with no text layer."""
    from fpdf import FPDF
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (1240, 1754), 255)  # A4 at 150 dpi
    draw = ImageDraw.Draw(image)
    font: ImageFont.FreeTypeFont | ImageFont.ImageFont
    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 20)
    except OSError:
        font = ImageFont.load_default()
    for i, line in enumerate(lines):
        draw.text((100, 100 + i * 30), line, fill=0, font=font)
    pdf = FPDF()
    pdf.add_page()
    pdf.image(image, x=0, y=0, w=210, h=297)
    pdf.output(str(path))


def delivery_note_lines(count: int) -> list[str]:
    """The delivery notes a supplier attached to its invoice: ``count`` lines of them."""
    return [f"Delivery note DN-2026-{n:04d}, {LINES[n % len(LINES)][0]}: delivered to Keizersgracht 100"
            for n in range(1, count + 1)]


def write_docx(path: Path, lines: list[str]) -> None:
    import docx

    document = docx.Document()
    document.add_heading("Invoice", level=1)
    for line in lines:
        document.add_paragraph(line)
    document.core_properties.title = "Invoice"
    document.save(str(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--oversized", metavar="PATH", help="also write a PDF just over the size limit to PATH")
    args = parser.parse_args()
    write_pdf(HERE / "invoice-clean.pdf", invoice_lines())
    write_pdf(HERE / "invoice-missing-fields.pdf", invoice_lines(vat=None, iban=None, date=None))
    write_pdf(HERE / "invoice-bad-iban.pdf", invoice_lines(iban="DE89 3704 0044 0532 0130 01"))
    write_scanned_pdf(HERE / "invoice-scanned.pdf", invoice_lines())
    write_pdf(HERE / "invoice-too-many-pages.pdf", invoice_lines(), pages=25)
    (HERE / "invoice.txt").write_text("\n".join(invoice_lines(number="INV-2026-0143")) + "\n", encoding="utf-8")
    write_docx(HERE / "invoice.docx", invoice_lines(number="INV-2026-0144", vat="NL004495445B01",
                                                     iban="NL91 ABNA 0417 1643 00"))
    # Over the page limit only in its text, which acceptance does not read for a DOCX: it fails at extraction.
    write_docx(HERE / "invoice-too-long.docx", invoice_lines(number="INV-2026-0145") + delivery_note_lines(900))
    if args.oversized:
        from agent.samples import oversized_pdf

        Path(args.oversized).write_bytes(oversized_pdf())
    for path in sorted(HERE.iterdir()):
        if path.suffix in {".pdf", ".txt", ".docx"}:
            print(f"{path.name:32} {path.stat().st_size:>9} bytes")


if __name__ == "__main__":
    main()
