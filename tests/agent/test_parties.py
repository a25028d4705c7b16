"""Who sells and who buys: the supplier found by evidence, the seller's tax id in any country's scheme, the
buyer's name. Every document here is made up for its rule."""

from __future__ import annotations

from datetime import date

import pytest

from agent.reading import fields, layout

TODAY = date(2026, 6, 1)


def pdf_fields(items: list[tuple[float, float, str, float]]) -> dict:
    """The fields read off a one-page PDF with each text at (x, y) in points, in its own font size."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    for x, y, text, size in items:
        pdf.set_font("Helvetica", size=size)
        pdf.text(x, y, text)
    return fields.read_fields(layout.read_layout(bytes(pdf.output()), "application/pdf"), today=TODAY)


def read(text: str) -> dict:
    return fields.check_all(text, today=TODAY)


# --- the supplier ----------------------------------------------------------------------------


def test_the_letterhead_names_the_supplier_even_beside_a_buyer_block_with_a_legal_form():
    found = pdf_fields([
        (50, 60, "Harborline Marine Supplies", 22),
        (50, 78, "Quay Road 9 - Portsmouth PO1 3AX", 8),
        (50, 160, "Invoice to:", 10), (50, 174, "Westcliff Trading Ltd", 10), (50, 186, "17 Elm Row", 10),
        (50, 198, "Bristol BS1 4QT", 10),
        (360, 160, "Invoice no. HM-5521", 10), (360, 174, "Date: 12 March 2026", 10),
        (50, 300, "Rope, braided, 50 m", 10), (420, 300, "GBP 240.00", 10),
        (50, 330, "Total due", 10), (420, 330, "GBP 240.00", 10),
    ])
    assert found["supplier_name"]["value"] == "Harborline Marine Supplies"
    assert found["buyer_name"] == found["buyer_name"] | {"status": "present", "value": "Westcliff Trading Ltd"}
    assert found["buyer_name"]["evidence"]["page"] == 1


def test_the_footers_legal_line_names_the_supplier_when_the_top_names_only_the_buyer():
    found = pdf_fields([
        (50, 60, "RECHNUNG", 18),
        (50, 120, "Rechnungsempfänger:", 10), (50, 134, "Kessler Bau AG", 10), (50, 146, "Ringstraße 4", 10),
        (50, 158, "34117 Kassel", 10),
        (360, 120, "Rechnungsnr. 2026-118", 10), (360, 134, "Datum: 02.03.2026", 10),
        (50, 260, "Wartung Hebebühne", 10), (420, 260, "480,00 EUR", 10),
        (50, 290, "Gesamtbetrag", 10), (420, 290, "571,20 EUR", 10),
        (50, 790, "Brightwater Werkzeuge GmbH · Sitz Göttingen · HRB 4711 · USt-IdNr. DE136695976", 7),
    ])
    assert found["supplier_name"]["value"] == "Brightwater Werkzeuge GmbH"
    assert found["buyer_name"]["value"] == "Kessler Bau AG"


@pytest.mark.parametrize("text", [
    "Omega Print Ltd\nBank name: Northshire Bank Limited\nIBAN GB33BUKB20201555555555",  # the bank's name
    "Omega Print Ltd\nDescription        Qty        Price        Amount\nPosters        2        10.00        20.00",
])
def test_a_bank_or_a_column_header_is_never_the_supplier(text):
    assert read(text)["supplier_name"]["value"] == "Omega Print Ltd"


def test_postal_indicia_a_copy_mark_and_a_country_line_are_never_the_supplier():
    text = "P.P. 8000 Zürich\nORIGINAL\nSwitzerland\nLindenhof Verlag AG\nInvoice 88"
    assert read(text)["supplier_name"]["value"] == "Lindenhof Verlag AG"


def test_the_domain_of_the_suppliers_address_tells_its_name_among_two():
    text = ("Kestrel Analytics\nTeal Harbour\n\nInvoice 2026-7\n\n\n\n\n\n\n"
            "Questions? billing@kestrel-analytics.io")
    assert read(text)["supplier_name"]["value"] == "Kestrel Analytics"


def test_a_web_address_printed_without_www_names_the_supplier_over_the_account_holder_at_the_top():
    found = pdf_fields([
        (50, 60, "Monthly bill", 14), (300, 60, "Account no.", 9), (400, 60, "Bill date", 9),
        (50, 78, "ROSALIND QUAYE", 12), (300, 78, "5512-0093", 10), (400, 78, "Mar 3, 2026", 10),
        (50, 200, "Broadband 500", 10), (420, 200, "42.00", 10),
        (50, 230, "Total due", 10), (420, 230, "42.00", 10),
        (50, 700, "Manage your plan at my.lumenfibre.net or pay at lumenfibre.net/pay", 8),
        (50, 760, "LUMENFIBRE", 10), (50, 772, "PO Box 4410", 10),
    ])
    assert found["supplier_name"]["value"] == "LUMENFIBRE"


def test_a_file_name_or_an_amount_is_no_web_address():
    text = ("Otterburn Joinery\nHollins Lane 3\n\nInvoice 88\nSee attached plan.pdf and quote 12.50\n"
            "Total due 12.50")
    assert read(text)["supplier_name"]["value"] == "Otterburn Joinery"


def test_a_receipts_centred_header_ties_its_name_to_the_tax_id_centred_under_it():
    """A till centres its lines: the shop's long name starts far left of the short tax-id line under it."""
    found = pdf_fields([
        (160, 40, "DROGUERIA LOS ALAMOS PRINCIPAL", 12), (232, 56, "NIT 900123456-8", 10),
        (230, 72, "Carrera 7 # 12-40", 10), (250, 88, "Receipt 5531", 10),
        (150, 120, "JABON AZUL 2", 10), (380, 120, "7,900", 10),
        (150, 140, "TOTAL", 10), (380, 140, "7,900", 10),
        (190, 400, "Cajas Rapidas Tecnologia", 9), (210, 412, "www.cajasrapidas.co", 9),
    ])
    assert found["supplier_name"]["value"] == "DROGUERIA LOS ALAMOS PRINCIPAL"


def test_a_three_letter_legal_form_that_lost_its_last_dot_is_still_one():
    text = "ALMACENES EL TRIGAL S.A.S,\nCalle 9 # 4-20\nFactura 77\nOrquidea Web Solutions\nTotal 12.000"
    assert read(text)["supplier_name"]["value"] == "ALMACENES EL TRIGAL S.A.S"


def test_the_company_on_its_own_signature_line_beside_the_buyers_is_the_supplier():
    """A receipt printed with no letterhead: who issued it signs it at its foot, beside the customer."""
    found = pdf_fields([
        (250, 50, "Collection Receipt", 14), (250, 70, "Receipt #   77120", 10), (250, 84, "Date   03/02/2026", 10),
        (50, 140, "Towing and storage", 10), (420, 140, "$310.00", 10),
        (50, 170, "Total", 10), (420, 170, "$310.00", 10),
        (50, 700, "Customer Signature", 9), (250, 700, "Harlan Depot Signature", 9),
    ])
    assert found["supplier_name"]["value"] == "Harlan Depot"


@pytest.mark.parametrize("line", ["Customer Signature", "Authorised Signature", "Signature du client"])
def test_a_partys_role_on_a_signature_line_names_nobody(line):
    text = f"Invoice 12\nTotal        40.00\n{line}\n"
    assert read(text)["supplier_name"]["value"] is None


def test_the_buyers_name_printed_again_in_a_table_is_not_the_supplier():
    found = pdf_fields([
        (250, 50, "Statement", 14), (250, 70, "Buyer Name", 10), (350, 70, "Oakridge Fleet Services LLC", 10),
        (100, 150, "Ship To:", 10), (260, 150, "Description", 10), (420, 150, "Amount", 10),
        (50, 170, "Oakridge Fleet Services LLC", 10), (260, 170, "Parts", 10), (420, 170, "$80.00", 10),
        (50, 200, "Total", 10), (420, 200, "$80.00", 10),
        (50, 700, "Print Name/Company/Title", 9), (50, 720, "Westmark Auctions Signature", 9),
    ])
    assert found["supplier_name"]["value"] == "Westmark Auctions"
    assert found["buyer_name"]["value"] == "Oakridge Fleet Services LLC"


def test_a_public_body_counts_like_a_company():
    text = "PARKING NOTICE\nTown of Millbrook\nReceipt 4411\nAmount paid 5.00"
    assert read(text)["supplier_name"]["value"] == "Town of Millbrook"


def test_two_names_with_as_much_evidence_are_to_check_with_both():
    found = pdf_fields([
        (50, 60, "Sunbeam Studios Ltd", 16),
        (50, 160, "Invoice no. SS-204", 10), (50, 174, "Date: 3 February 2026", 10),
        (50, 260, "Photography, half day", 10), (420, 260, "GBP 300.00", 10),
        (50, 290, "Total due", 10), (420, 290, "GBP 360.00", 10),
        (50, 790, "Sunbeam Studios is a trading name of Corvid Media Ltd · VAT Reg. No. GB 980 7806 84", 7),
    ])
    supplier = found["supplier_name"]
    assert supplier["status"] == "to_check", supplier
    assert {c["value"] for c in supplier["candidates"]} == {"Sunbeam Studios Ltd", "Corvid Media Ltd"}


# --- the seller's tax id in any country's scheme ------------------------------------------------


@pytest.mark.parametrize("text, printed, country, normalized", [
    ("Estudio Pampa S.R.L.\nC.U.I.T.: 30-71864529-4\nIVA Responsable Inscripto", "30-71864529-4", "AR", "30718645294"),
    ("Bluegum Joinery Pty Ltd\nABN 96 530 123 456\nTax Invoice 118", "96 530 123 456", "AU", "96530123456"),
    ("Kedai Runcit Maju Sdn Bhd\nSST Reg. No.: W10-1808-31000123\nInvoice 7", "W10-1808-31000123", "MY",
     "W10180831000123"),
    ("Kedai Runcit Maju Sdn Bhd\nGST ID No: 000123456789\nInvoice 7", "000123456789", "MY", "000123456789"),
    ("Shree Ganesh Traders\nGSTIN: 27AACCM1234K1ZL\nTax Invoice 55", "27AACCM1234K1ZL", "IN", "27AACCM1234K1ZL"),
    ("Pinecrest Labs Inc.\nEIN: 46-1234567\nInvoice 3", "46-1234567", "US", "461234567"),
    ("Gráfica Aurora Ltda\nCNPJ 11.222.333/0001-81\nNota 12", "11.222.333/0001-81", "BR", "11222333000181"),
    ("Fjordlys Design AS\nOrg.nr. NO 931 793 403 MVA\nFaktura 9", "NO 931 793 403 MVA", "NO", "931793403MVA"),
    ("Tessitura Lario Srl\nPartita IVA 04567890589\nFattura 31", "04567890589", "IT", "IT04567890589"),
])
def test_the_sellers_tax_id_in_its_countrys_scheme_is_returned_as_printed(text, printed, country, normalized):
    found = read(text)["vat_id"]
    assert (found["status"], found["value"], found["country"], found["normalized"]) == \
        ("present", printed, country, normalized), found


def test_a_format_without_check_digits_says_so():
    found = read("Kedai Runcit Maju Sdn Bhd\nSST Reg. No.: W10-1808-31000123")["vat_id"]
    assert "format only" in found["detail"]


def test_an_eu_vat_id_printed_without_its_prefix_is_never_given_one():
    found = read("Tessitura Lario Srl\nPartita IVA 04567890589")["vat_id"]
    assert found["value"] == "04567890589" and found["normalized"] == "IT04567890589"


def test_a_swiss_uid_is_the_sellers_not_the_third_partys_on_the_same_page():
    found = pdf_fields([
        (50, 60, "Alpenglühen Reisen AG", 18), (50, 80, "Bahnhofplatz 3, 3011 Bern", 9),
        (50, 94, "MWST-Nr. CHE-109.345.670 MWST", 9),
        (360, 160, "Rechnung Nr. 2026-044", 10), (360, 174, "Datum: 14.02.2026", 10),
        (50, 300, "Gruppenreise Engadin", 10), (420, 300, "CHF 1'200.00", 10),
        (50, 330, "Total", 10), (420, 330, "CHF 1'292.40", 10),
        (50, 790, "Inkasso im Auftrag durch Treuwerk Zahlungen AG, UID CHE-471.122.334", 7),
    ])
    vat = found["vat_id"]
    assert (vat["value"], vat["country"], vat["normalized"]) == ("CHE-109.345.670 MWST", "CH", "CHE109345670")
    assert found["supplier_name"]["value"] == "Alpenglühen Reisen AG"


def test_the_buyers_cuit_in_its_block_is_never_the_sellers():
    text = ("Estudio Pampa S.R.L.\nCUIT 30-71864529-4\n\n"
            "Cliente:\nFerretería Norte SA\nCUIT 20-33445566-2\n")
    assert read(text)["vat_id"]["value"] == "30-71864529-4"
    assert read(text.replace("CUIT 30-71864529-4\n", ""))["vat_id"]["status"] == "missing"


def test_a_shape_only_one_scheme_prints_is_read_anywhere():
    found = read("Gráfica Aurora Ltda - Rua das Flores 10 - 11.222.333/0001-81\nNota fiscal 12")["vat_id"]
    assert (found["value"], found["country"]) == ("11.222.333/0001-81", "BR")


def test_the_suppliers_country_comes_from_its_tax_id():
    from agent.reading.fields.identifiers import find_iban, find_vat_id, supplier_country
    from agent.reading.fields.page import Page

    page = Page(layout.Layout.from_text("Bluegum Joinery Pty Ltd\nABN 96 530 123 456\nTotal $ 110.00"))
    assert supplier_country(page, {"vat_id": find_vat_id(page), "iban": find_iban(page)}) == "AU"


# --- the buyer's name -------------------------------------------------------------------------


@pytest.mark.parametrize("text, buyer", [
    ("Bill to: Marlow & Finch LLP\n12 Canal St", "Marlow & Finch LLP"),
    ("Nabywca\nNazwa: Zielony Ogród sp. z o.o.\nul. Polna 3", "Zielony Ogród sp. z o.o."),
    ("Odběratel\n4Tech Servis s.r.o.\nNádražní 12", "4Tech Servis s.r.o."),  # a name may start with a digit
    ("Sr.(s):        Lucía Ferreyra\nDirección: Av. Mitre 200", "Lucía Ferreyra"),
])
def test_the_buyers_name_is_read_from_its_block(text, buyer):
    assert read(text)["buyer_name"]["value"] == buyer


def test_without_a_buyer_block_the_buyer_is_missing_and_never_asked_of_the_supplier():
    found = read("Harborline Marine Supplies\nInvoice 12\nTotal 10.00")
    assert found["buyer_name"] == {"status": "missing", "value": None, "detail": "no buyer name found",
                                   "evidence": None}
    assert "buyer_name" not in fields.REQUIRED and "buyer_name" in fields.ALSO_READ
    assert fields.LABELS["buyer_name"] == "Buyer name"


def test_a_vat_id_with_and_without_its_prefix_is_one_supplier_for_the_duplicate_check():
    from agent.review.duplicates import supplier_key

    bare = read("Tessitura Lario Srl\nPartita IVA 04567890589\nFattura 31")
    prefixed = read("Tessitura Lario Srl\nP.IVA IT 04567890589\nFattura 32")
    assert bare["vat_id"]["value"] != prefixed["vat_id"]["value"]
    assert supplier_key(bare) == supplier_key(prefixed) == "vat:IT04567890589"


def test_ocr_confusing_two_characters_is_read_back_when_the_check_digits_then_pass():
    from agent.reading.layout import Layout, Line, Word

    def line(text: str, top: float, conf: float | None) -> Line:
        words, x = [], 50.0
        for word in text.split():
            words.append(Word(word, x, top, x + 6 * len(word), top + 10, conf))
            x += 6 * len(word) + 4
        return Line(page=1, words=words, text=text)

    def vat(conf: float | None) -> dict:
        page = Layout(pages=1, lines=[line("Shree Ganesh Traders", 40, conf), line("GSTIN: 27AACCM1234K12L", 60, conf)],
                      sizes=[[595.0, 842.0]])
        return fields.read_fields(page, today=TODAY)["vat_id"]

    assert (vat(88.0)["status"], vat(88.0)["value"]) == ("present", "27AACCM1234K1ZL")  # a "2" OCR read for a "Z"
    assert (vat(None)["status"], vat(None)["value"]) == ("malformed", "27AACCM1234K12L")  # a text layer: as printed


def test_a_labelled_number_that_fails_its_schemes_check_is_reported_as_printed():
    found = read("Jarní dílna s.r.o.\nDIČ CZ1234567891\nFaktura 5")["vat_id"]
    assert (found["status"], found["value"]) == ("malformed", "CZ1234567891")


def test_a_samples_placeholder_number_is_no_ones_tax_id():
    assert read("Empresa Modelo S.A.\nCUIT: 30-00000000-7")["vat_id"]["status"] == "missing"


def test_a_buyer_name_not_found_leaves_the_review_ok():
    from agent.review import workflow

    found = read("Harborline Marine Supplies\nInvoice 12\nTotal 10.00")
    present = {name: {"status": "present", "value": "x", "detail": "", "evidence": None} for name in fields.REQUIRED}
    summary = workflow.summarize({"fields": {**present, "buyer_name": found["buyer_name"]}, "findings": []})
    assert (summary.outcome, summary.text) == ("ok", "OK")


@pytest.mark.parametrize("typed, country, detail", [
    ("30-71864529-4", None, "valid AR CUIT (format and check digits)"),  # its shape names its scheme
    ("96 530 123 456", "AU", "valid AU ABN (format and check digits)"),  # the country given names it
    ("11.222.333/0001-81", None, "valid BR CNPJ (format and check digits)"),
])
def test_a_tax_id_typed_or_suggested_is_checked_by_its_own_scheme(typed, country, detail):
    assert fields.check_value("vat_id", typed, country=country) == fields.Field("present", typed, detail)
    one_off = typed[:-1] + str((int(typed[-1]) + 1) % 10)  # its check digit wrong
    assert fields.check_value("vat_id", one_off, country=country).status == "malformed"


@pytest.mark.parametrize("text, printed, country", [
    ("Nordsø Tømrer ApS\nCVR-nr. 29184739\nFaktura 41", "29184739", "DK"),
    ("Lindqvist Bygg AB\nOrg.nr 556036-0793\nFaktura 8", "556036-0793", "SE"),
    ("Oficina Douro Lda\nNIF 501234560\nFatura 17", "501234560", "PT"),
    ("Harbor Freight Co.\nTax ID: DE136695976\nInvoice 4", "DE136695976", "DE"),  # a generic label: the prefix
])
def test_more_schemes_and_a_generic_tax_label(text, printed, country):
    found = read(text)["vat_id"]
    assert (found["status"], found["value"], found["country"]) == ("present", printed, country), found


@pytest.mark.parametrize("footer, printed", [
    ("Björkdal Snickeri AB · Organisationsnr: 556036-0793 · Momsregnr: SE556036079301", "SE556036079301"),
    ("Holm & Bach ApS · CVR-nr. 29184739 · Momsnr. DK29184739", "DK29184739"),
])
def test_a_vat_id_printed_beside_its_companys_register_number_is_the_one_read(footer, printed):
    found = read(f"Faktura 771\nAtt betala 4 500,00 kr\n{footer}\n")["vat_id"]
    assert (found["status"], found["value"]) == ("present", printed)


def test_a_label_s_value_beside_it_is_no_supplier_nor_is_a_vat_standing():
    found = pdf_fields([
        (50, 60, "QUIROGA MARTA INES", 9),
        (50, 90, "Condición frente al IVA:", 8), (170, 90, "IVA Responsable Inscripto", 8),
        (50, 102, "Condición de venta:", 8), (170, 102, "Cuenta Corriente", 8),
        (360, 60, "FACTURA", 12), (360, 80, "Fecha de Emisión: 03/05/2024", 8),
    ])
    # Not "to check" between the name and the standing beside "Condición frente al IVA:".
    assert (found["supplier_name"]["status"], found["supplier_name"]["value"]) == ("present", "QUIROGA MARTA INES")


def test_the_foot_of_the_page_is_read_below_a_long_list_of_items():
    items = [(50, 40, "INVOICE 2026-31", 14)]
    items += [(50, 90 + 10 * row, f"Garden Hose Connector Type {chr(65 + row % 26)}", 8) for row in range(68)]
    items += [(420, 90 + 10 * row, "4.20", 8) for row in range(68)]
    items += [(50, 790, "Kestrel Garden", 8), (50, 800, "www.kestrelgarden.example", 7)]
    assert pdf_fields(items)["supplier_name"]["value"] == "Kestrel Garden"


def test_the_recipient_in_the_envelopes_window_is_not_the_supplier_even_with_a_legal_form():
    found = pdf_fields([
        (60, 40, "Nordlicht Büroservice", 10), (60, 52, "Hafenstraße 2 · 24103 Kiel", 8),
        (60, 150, "Kessler Bau AG", 10), (60, 162, "Ringstraße 4", 10), (60, 174, "34117 Kassel", 10),
        (360, 150, "Rechnung Nr. 2026-118", 10), (360, 162, "Datum: 02.03.2026", 10),
        (60, 300, "Büroreinigung März", 10), (420, 300, "480,00 EUR", 10),
        (60, 330, "Gesamtbetrag", 10), (420, 330, "571,20 EUR", 10),
    ])
    assert found["supplier_name"]["value"] == "Nordlicht Büroservice"


def test_without_a_heading_the_buyer_is_the_name_in_the_envelopes_window():
    found = pdf_fields([
        (60, 40, "Nordlicht Büroservice", 10), (60, 52, "Hafenstraße 2 · 24103 Kiel", 8),
        (60, 150, "Kessler Bau AG", 10), (60, 162, "Ringstraße 4", 10), (60, 174, "34117 Kassel", 10),
        (360, 150, "Rechnung Nr. 2026-118", 10),
    ])
    assert found["buyer_name"]["value"] == "Kessler Bau AG"


def test_an_items_table_in_the_window_band_is_no_address_though_its_article_codes_look_like_postcodes():
    found = pdf_fields([
        (60, 40, "Drogaria Ventura Lda", 12), (60, 56, "Rua do Carmo 12, Lisboa", 8),
        (60, 150, "ARTIGO DESIGNACAO", 9), (330, 150, "QTD. VALOR", 9),
        (60, 162, "20417 SABONETE NEUTRO", 9), (330, 162, "2.00", 9), (400, 162, "3.80", 9),
        (60, 174, "31188 PASTA DENTIFRICA", 9), (330, 174, "1.00", 9), (400, 174, "2.45", 9),
        (60, 200, "TOTAL", 10), (400, 200, "6.25", 10),
    ])
    assert found["buyer_name"]["value"] is None


@pytest.mark.parametrize("text", [
    "INVOICE 7\nPayable to:\nPinecrest Labs, Inc.\nPO Box 1200\nBill to:\nOakridge Health LLC",
    "INVOICE 7\nRemit to:\nPinecrest Labs, Inc.\nPO Box 1200\nSold to:\nOakridge Health LLC",
])
def test_the_payee_heading_names_the_seller_and_a_comma_before_its_legal_form_is_its_own(text):
    found = read(text)
    assert (found["supplier_name"]["value"], found["buyer_name"]["value"]) == \
        ("Pinecrest Labs, Inc.", "Oakridge Health LLC")


def test_a_court_after_a_comma_in_the_legal_line_is_no_company():
    text = "Rechnung 12\n\n\n\n\n\n\nHafenkran Logistik GmbH & Co. KG · Sitz Bremen, AG Bremen HRA 4711"
    assert read(text)["supplier_name"]["value"] == "Hafenkran Logistik GmbH & Co. KG"


def test_a_buyers_label_beside_its_name_marks_the_buyer_not_the_supplier():
    text = ("Buyer Receipt\nReceipt #        88120\nSold At Branch        North Yard\n"
            "Buyer Number        5521\nBuyer Name        Riverside Motors LLC\n")
    found = read(text)
    assert found["buyer_name"]["value"] == "Riverside Motors LLC"
    assert found["supplier_name"]["value"] != "Riverside Motors LLC"
