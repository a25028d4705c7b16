"""The field checks on values suppliers really print (the note's wording is in test_draft)."""

from __future__ import annotations

import signal
from contextlib import contextmanager
from datetime import date

import pytest

from agent.reading import fields
from agent.review import steps
from tests import hostile

TODAY = date(2026, 6, 1)


@pytest.mark.parametrize("value, status, shown", [
    ("DE136695976", "present", "DE136695976"),
    ("DE 136 695 976", "present", "DE136695976"),
    ("DE136695977", "malformed", "DE136695977"),  # one check digit off
    ("FR40303265045", "present", "FR40303265045"),
    ("EL094259216", "present", "EL094259216"),  # Greece prints EL, not GR
    ("123456789", "malformed", "123456789"),  # no country prefix and no country given
])
def test_vat_ids_are_checked_per_country(value, status, shown):
    field = fields.check_vat_id(value)
    assert (field.status, field.value) == (status, shown), field


def test_a_vat_id_without_prefix_is_checked_against_the_given_country():
    assert fields.check_vat_id("136695976", country="DE").value == "DE136695976"


@pytest.mark.parametrize("value, status, shown, detail", [
    ("14 March 2026", "present", "2026-03-14", ""),
    ("14.03.2026", "present", "2026-03-14", ""),
    ("03/04/2026", "present", "2026-04-03", "day and month are ambiguous; read as day first"),
    ("14 March", "malformed", "14 March", "not a full date (day, month and year)"),  # no year: not 2000
    ("March 2026", "malformed", "March 2026", "not a full date (day, month and year)"),
    ("31.02.2026", "malformed", "31.02.2026", "not a date"),
    ("14 March 2027", "malformed", "2027-03-14", "the invoice date is in the future"),
])
def test_invoice_dates(value, status, shown, detail):
    assert fields.check_invoice_date(value, today=TODAY) == fields.Field(status, shown, detail)


@pytest.mark.parametrize("value, status, shown", [
    ("EUR 1,333.87", "present", "1333.87"),
    ("1.333,87 €", "present", "1333.87"),
    ("EUR -1,333.87", "malformed", "-1333.87"),  # price-parser alone drops the sign
    ("-€120", "malformed", "-120"),
    ("(100.00)", "malformed", "-100.00"),
    ("0.00", "malformed", "0.00"),
    ("to be confirmed", "malformed", "to be confirmed"),
])
def test_total_amounts(value, status, shown):
    field = fields.check_total_amount(value)
    assert (field.status, field.value) == (status, shown), field


def test_an_iban_is_checked_by_mod_97():
    assert fields.check_iban("DE89 3704 0044 0532 0130 00").status == "present"
    bad = fields.check_iban("DE89 3704 0044 0532 0130 01")
    assert bad.status == "malformed" and "check digits" in bad.detail


# --- the field patterns on hostile text ---------------------------------------------------
#
# Inline text may be 100,000 characters. A pattern whose quantifiers share the blanks after
# a label tries every way of splitting them before it gives up: cubic time, minutes for a
# few KB. Each case below is at the maximum size and must finish within a generous bound
# (an interval timer interrupts the regex engine if it does not).

MAX_TEXT = steps.MAX_INLINE_CHARS
BOUND = 1.0  # seconds, for work the patterns do in a few milliseconds
SAMPLE_LABELS = [
    ("supplier_name", "Supplier"), ("supplier_name", "Supplier name"), ("vat_id", "VAT"),
    ("vat_id", "VAT reg no"), ("vat_id", "Tax id"), ("invoice_number", "Invoice no"),
    ("invoice_number", "Invoice number"), ("invoice_date", "Invoice date"), ("invoice_date", "Date of issue"),
    ("currency", "Currency"), ("total_amount", "Total"), ("total_amount", "Total amount"),
    ("total_amount", "Grand total"), ("iban", "IBAN"), ("account", "Bank account no"),
]


def _fill(unit: str, size: int = MAX_TEXT) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def hostile_texts(label: str) -> dict[str, tuple[str, str | None]]:
    """Shapes of text that make a backtracking label pattern slow: text, the value to find."""
    rest = MAX_TEXT - len(label)
    return {
        "blanks after the label": (label + " " * rest, None),
        "tabs after the label": (label + "\t" * rest, None),
        "blanks and tabs mixed": (label + _fill(" \t", rest), None),
        "blanks then a colon": (label + " " * (rest - 1) + ":", None),
        "blanks around a colon": (label + " " * (rest // 2) + ":" + " " * (rest - rest // 2 - 1), None),
        "colons and blanks": (label + _fill(" :", rest), None),
        "the label repeated": (_fill(label + " "), None),
        "many lines of label and blanks": (_fill(label + " " * 200 + "\n"), None),
        "many lines of label, blanks, colon": (_fill(label + " " * 100 + ":\n"), None),
        "a value, then blanks to the end": (label + ": 42" + " " * (rest - 4), "42"),
        "a value, blanks, one more word": (label + ": 42" + " " * (rest - 6) + " x",
                                           ("42" + " " * rest)[:fields.MAX_VALUE_CHARS]),
    }


@contextmanager
def finishes_within(seconds: float):
    """Fail (TimeoutError) if the block spends more than ``seconds`` of this process's CPU; the regex
    engine checks signals. CPU, not the wall clock: a busy machine slows the block, not its work."""
    def interrupt(signum, frame):
        raise TimeoutError(f"still running after {seconds} s of CPU")

    previous = signal.signal(signal.SIGPROF, interrupt)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


# What the reader makes of "<label>: 42" for each sample label's field ("account" is the IBAN's fallback).
VALUE_42 = {"invoice_number": "42", "total_amount": "42.00", "account": "42"}


@pytest.mark.parametrize("shape", list(hostile_texts("Total")))
@pytest.mark.parametrize("name, label", SAMPLE_LABELS)
def test_each_field_pattern_is_fast_on_hostile_text(name, label, shape):
    text, expected = hostile_texts(label)[shape]
    assert len(text) == MAX_TEXT
    with finishes_within(BOUND):
        checked = fields.check_all(text, today=TODAY)
    value = checked["iban" if name == "account" else name]["value"]
    if expected is None:
        assert value is None or name == "invoice_date", (name, value)  # a date label alone finds nothing either
    elif name in VALUE_42:
        assert value == VALUE_42[name]


@pytest.mark.parametrize("shape", list(hostile_texts("Total")))
def test_checking_every_field_is_fast_on_hostile_text(shape):
    # Every label's hostile lines in one text of the maximum size, checked as the workflow does.
    lines = [hostile_texts(label)[shape][0][:MAX_TEXT // len(SAMPLE_LABELS)] for _, label in SAMPLE_LABELS]
    text = "\n".join(lines)[:MAX_TEXT]
    with finishes_within(BOUND * 2):
        checked = fields.check_all(text, today=TODAY)
    assert set(checked) - set(fields.ALSO_READ) == set(fields.REQUIRED)


def test_three_and_a_half_kb_of_total_and_spaces_is_checked_at_once():
    text = hostile.total_and_spaces()
    assert len(text) == 3_600
    with finishes_within(BOUND):
        checked = fields.check_all(text, today=TODAY)
    assert checked["total_amount"]["status"] == "missing"


def test_a_label_split_over_two_lines_is_not_a_label():
    # "Invoice" at the end of one line and "number: 7" on the next are not a label and its value.
    assert fields.check_all("Invoice\nnumber: 7")["invoice_number"]["value"] is None
    assert fields.check_all("Invoice\nInvoice number: 7")["invoice_number"]["value"] == "7"
    assert fields.check_all("Total amount:\nTotal:  EUR 5.00 \r\n")["total_amount"]["value"] == "5.00"


# --- reading any supplier's layout ---------------------------------------------------------
#
# Made-up lines in each of the seven languages, the shapes real invoices print: a label and
# its value after any separator, in the next column or under the label; amounts and dates
# in each style; identifiers found anywhere by their check digits.


def read(text: str, **kwargs) -> dict:
    return fields.check_all(text, today=TODAY, **kwargs)


def value(text: str, name: str, **kwargs):
    return read(text, **kwargs)[name]["value"]


@pytest.mark.parametrize("line, number", [
    ("Invoice # INV-2041", "INV-2041"),
    ("Invoice No. 2041/A", "2041/A"),
    ("Rechnungsnr. 30064443", "30064443"),
    ("Rechnungsnummer: R-2024-117", "R-2024-117"),
    ("Re.-Nr. 25037800", "25037800"),
    ("Handelsrechnung Nr. 471102 vom 05.03.2018", "471102"),
    ("Factuurnummer: 993548900", "993548900"),
    ("Facture n°562044387", "562044387"),
    ("N° de facture : FA-2017-0010", "FA-2017-0010"),
    ("Factura n.º A-0237 de fecha 09-09-2025", "A-0237"),
    ("Nº factura: FV25-89473", "FV25-89473"),
    ("Numero fattura 2024/FE/1921", "2024/FE/1921"),
    ("Fatt. N° 118", "118"),
    ("Nr faktury: FS 616/2025", "FS 616/2025"),
    ("Faktura VAT nr 12/05/2025/K", "12/05/2025/K"),
    ("Facture FA-2017-0010", "FA-2017-0010"),  # a title followed straight by its number
    ("Faktuurnummer: 12345", "12345"),
    ("N° pièce : FA-77", "FA-77"),
    ("Documento n. 2024/118", "2024/118"),
])
def test_invoice_numbers_after_any_label_and_separator(line, number):
    assert value(line, "invoice_number") == number


@pytest.mark.parametrize("line, iso", [
    ("Invoice date: 14 March 2026", "2026-03-14"),
    ("Rechnungsdatum 7. Mai 2014", "2014-05-07"),
    ("Date de facture 02 Juillet 2015", "2015-07-02"),
    ("Factuurdatum: 19 april 2014", "2014-04-19"),
    ("Fecha de factura: 3 de marzo de 2015", "2015-03-03"),
    ("Data fattura 3 marzo 2015", "2015-03-03"),
    ("Data wystawienia: 5 stycznia 2016", "2016-01-05"),
    ("Data wystawienia 12 października 2016 r.", "2016-10-12"),
    ("Invoice Date: August 3 , 2014", "2014-08-03"),
    ("Datum: 05.03.2018", "2018-03-05"),
    ("Date: 2025-11-23", "2025-11-23"),
    ("Fecha 10/02/2025", "2025-02-10"),
])
def test_invoice_dates_with_month_names_in_seven_languages(line, iso):
    assert value(line, "invoice_date") == iso


def test_the_due_date_is_not_the_invoice_date():
    assert value("Due date: 01.04.2026\nDate: 01.03.2026", "invoice_date") == "2026-03-01"
    assert value("Fälligkeitsdatum: 01.04.2026", "invoice_date") is None


def test_slashed_dates_are_read_month_first_when_the_document_prints_a_month_over_twelve():
    text = "Invoice Date: 11/03/2017\nPayment received 11/17/2017"
    assert value(text, "invoice_date") == "2017-11-03"
    assert value("Invoice Date: 11/03/2017\nDelivered 17/11/2017", "invoice_date") == "2017-03-11"


@pytest.mark.parametrize("line, amount", [
    ("Gesamtbetrag 1.234,56 EUR", "1234.56"),
    ("Total due: $1,234.56", "1234.56"),
    ("Net à payer 1 234,56 €", "1234.56"),
    ("Net à payer 1\u202f234,56 €", "1234.56"),  # a narrow no-break space between thousands
    ("Totale documento CHF 1'234.56", "1234.56"),
    ("Do zapłaty 27 051,21 zł", "27051.21"),
    ("Totaal € 717,97", "717.97"),
    ("Importe total: 99,00 €", "99.00"),
    ("TOTAL AMOUNT DUE ON August 3 , 2014 $4.11", "4.11"),  # the date's digits are not the amount
    ("Zu zahlen: -8,79 EUR", "-8.79"),  # a sign right after the separator is kept
    ("Totale a pagare € 1.234,00", "1234.00"),
    ("Totaal te voldoen € 12,50", "12.50"),
    ("Invoice amount: USD 99.00", "99.00"),
])
def test_amount_styles_with_the_currency_before_or_after(line, amount):
    assert value(line, "total_amount") == amount


def test_the_total_due_is_told_apart_from_net_vat_and_line_amounts():
    text = ("Description   Qty   Total\nWidget   2   80,00\n"
            "Zwischensumme   80,00\nMwSt. 19 %   15,20\nGesamtbetrag der Zuschläge   0,00\nGesamtbetrag   95,20\n")
    found = read(text)["total_amount"]
    assert (found["status"], found["value"]) == ("present", "95.20")


@pytest.mark.parametrize("terms", [
    "Please pay within 30 days by bank transfer to:", "Zu zahlen innerhalb von 14 Tagen", "Net à payer sous 45 jours",
    "Te betalen binnen 30 dagen", "Da pagare entro 60 giorni"])
def test_a_term_of_payment_in_days_is_no_second_total(terms):
    found = read(f"TOTAL DUE 2,039.32 GBP\n{terms}\n")["total_amount"]
    assert (found["status"], found["value"]) == ("present", "2039.32")


def test_a_total_before_tax_is_not_the_total_due():
    assert value("Total before tax: 100.00\nTax: 20.00\nTotal: 120.00 USD", "total_amount") == "120.00"


def test_a_total_row_printing_net_vat_and_gross_gives_the_gross():
    assert value("TOTAAL INCL. BTW   27.753,00   5.828,13   € 33.581,13", "total_amount") == "33581.13"


def test_the_grand_total_is_kept_when_a_deposit_leaves_less_to_pay():
    found = read("Total TTC   671,15 €\nAcompte   201,00 €\nSolde à payer   470,15 €")["total_amount"]
    assert (found["value"], found["detail"]) == ("671.15",
                                                 "the amount still to pay is 470.15 after a payment of 201.00")


def test_two_strong_totals_that_disagree_are_to_check_with_both():
    found = read("Invoice total: 120.00 EUR\nGrand total: 150.00 EUR")["total_amount"]
    assert found["status"] == "to_check"
    assert [c["value"] for c in found["candidates"]] == ["120.00", "150.00"]
    assert all(c["evidence"]["text"] for c in found["candidates"])


def test_net_plus_vat_settles_two_disagreeing_totals():
    text = "Net total: 100.00\nVAT 20%: 20.00\nInvoice total: 120.00 EUR\nGrand total: 150.00 EUR"
    found = read(text)["total_amount"]
    assert (found["status"], found["value"]) == ("present", "120.00")


@pytest.mark.parametrize("text, vat", [
    ("Acme GmbH · Hauptstr. 1 · USt-IdNr. DE 136 695 976", "DE136695976"),  # with spaces
    ("TVA intracommunautaire : FR40303265045", "FR40303265045"),
    ("BTW-nummer NL004495445B01", "NL004495445B01"),
    ("NIF/CIF: ESB58378431", "ESB58378431"),
    ("Partita IVA 00743110157", "IT00743110157"),  # no prefix: the label says whose number it is
    ("NIP: 856-734-62-15", "PL8567346215"),
    ("Registered office London, company 123. IT00743110157 is our number", "IT00743110157"),  # found anywhere
])
def test_vat_ids_are_read_in_every_language_and_anywhere_by_their_check_digits(text, vat):
    found = read(text)["vat_id"]
    assert (found["status"], found["normalized"]) == ("present", vat)
    assert found["value"] in text  # as printed: no prefix added, no spaces taken out


def test_a_german_steuernummer_is_the_tax_id_only_when_no_vat_id_is_printed():
    found = read("Steuernummer: 201/113/40209")["vat_id"]
    assert (found["status"], found["value"], found["country"]) == ("present", "201/113/40209", "DE")
    assert value("Steuernummer: 201/113/40209\nUSt-IdNr.: DE136695976", "vat_id") == "DE136695976"


def test_the_buyers_vat_id_is_never_the_suppliers():
    text = ("Seller:\nAcme GmbH\nUSt-IdNr.: DE136695976\n\nBill to:\nZebra SAS\nTVA: FR40303265045\n")
    assert value(text, "vat_id") == "DE136695976"
    assert value("Customer VAT number: FR40303265045", "vat_id") is None
    assert value("Kunde:\nZebra SAS\nFR40303265045\n", "vat_id") is None
    assert value("N° TVA client   FR40303265045\nTVA : DE136695976", "vat_id") == "DE136695976"


def test_ibans_are_found_anywhere_also_printed_with_spaces():
    assert value("Please pay to NL91 ABNA 0417 1643 00 within 14 days", "iban") == "NL91 ABNA 0417 1643 00"
    assert value("IBAN NL91ABNA0417164300 · BIC ABNANL2A", "iban") == "NL91 ABNA 0417 1643 00"
    bad = read("IBAN: DE12 1234 4321 9876 00")["iban"]  # printed, but the check digits fail
    assert (bad["status"], bad["value"]) == ("malformed", "DE12 1234 4321 9876 00")


def test_a_value_in_the_next_column_or_under_its_label():
    text = ("Re.-Nr.        Rechnungsdatum        Kunden-Nr.\n"
            "25037800       23. November 2025     C49723\n"
            "Bankverbindung\n"
            "IBAN           DE89 3704 0044 0532 0130 00\n")
    found = read(text)
    assert found["invoice_number"]["value"] == "25037800"
    assert found["invoice_date"]["value"] == "2025-11-23"
    assert found["iban"]["value"] == "DE89 3704 0044 0532 0130 00"
    assert value("Invoice number:\nINV-77", "invoice_number") == "INV-77"  # on the next line


@pytest.mark.parametrize("text, name", [
    ("Zebra Handels GmbH · Bahnhofstraße 21 · 80335 München", "Zebra Handels GmbH"),
    ("Au bon moulin SARL - 1242 chemin de l'olive", "Au bon moulin SARL"),
    ("Van der Berg Installatietechniek B.V.", "Van der Berg Installatietechniek B.V."),
    ("Kowalczyk Budownictwo sp. z o.o.", "Kowalczyk Budownictwo sp. z o.o."),
    ("Verkäufer:\nNummer        : 549910\nMUSTER-Autovermietung\nMusterstr. 99", "MUSTER-Autovermietung"),
    ("Fornitore: Studio Bianchi", "Studio Bianchi"),
])
def test_the_supplier_from_a_legal_form_or_the_sellers_block(text, name):
    assert value(text, "supplier_name") == name


def test_the_supplier_is_never_the_buyer():
    text = "Rechnung\nRechnungsempfänger:\nKunden AG Mitte\nKundenstraße 15\n\n\n\n\n\n\n\n\n\n\n\n\n\n\nLieferant GmbH"
    assert value(text, "supplier_name") == "Lieferant GmbH"
    assert value("Bill to:\nZebra Ltd\n", "supplier_name") is None


@pytest.mark.parametrize("text, currency", [
    ("Währung: CHF\nTotal 12,00 EUR", "CHF"),  # a labelled currency first
    ("Devise : Euro\nTotal 12,00", "EUR"),  # or written out
    ("Währung: Schweizer Franken", "CHF"),
    ("Total: 12,00 £", "GBP"),  # else the total's symbol
    ("Item 1 EUR 5,00\nItem 2 EUR 7,00\nFees USD 1.00", "EUR"),  # else the one printed most
])
def test_the_currency(text, currency):
    assert value(text, "currency") == currency


def test_a_field_printed_nowhere_stays_missing():
    found = read("Thank you for your order.")
    assert all(found[name]["status"] == "missing" and found[name]["evidence"] is None for name in fields.REQUIRED)


def test_every_found_value_has_its_evidence_with_page_line_and_box():
    from agent.reading import layout
    from tests.pdfs import make_pdf

    content = make_pdf([
        (50, 60, "Zebra Handels GmbH"), (50, 74, "USt-IdNr. DE136695976"),
        (50, 120, "Rechnungsnr."), (200, 120, "RE-2024-17"),
        (50, 134, "Rechnungsdatum"), (200, 134, "7. Mai 2024"),
        (50, 300, "Gesamtbetrag"), (200, 300, "1.190,00 EUR"),
        (50, 400, "IBAN DE89 3704 0044 0532 0130 00"),
    ])
    found = fields.read_fields(layout.read_layout(content, "application/pdf"), today=TODAY)
    assert {name: found[name]["value"] for name in fields.REQUIRED} == {
        "supplier_name": "Zebra Handels GmbH", "vat_id": "DE136695976", "invoice_number": "RE-2024-17",
        "invoice_date": "2024-05-07", "currency": "EUR", "total_amount": "1190.00",
        "iban": "DE89 3704 0044 0532 0130 00"}
    for name in fields.REQUIRED:
        evidence = found[name]["evidence"]
        assert evidence["source"] == "text" and evidence["page"] == 1 and evidence["element"] is None
        x0, top, x1, bottom = evidence["box"]
        assert 40 < x0 < x1 < 560 and 40 < top < bottom < 420
    number = found["invoice_number"]["evidence"]
    assert number["text"].startswith("Rechnungsnr.") and number["text"].endswith("RE-2024-17")
    assert number["box"][0] > 190  # the value's own box, in the next column
    assert found["total_amount"]["evidence"]["box"][1] == pytest.approx(300 - 10, abs=4)


def test_evidence_from_plain_text_has_the_line_and_no_box():
    evidence = read("Some header\nInvoice number: 42")["invoice_number"]["evidence"]
    assert evidence == {"source": "text", "page": 1, "text": "Invoice number: 42", "box": None, "element": None}


def test_the_letterhead_names_the_supplier_when_nothing_else_does():
    from agent.reading import layout
    from tests.pdfs import make_pdf

    content = make_pdf([(50, 60, "Quillfeather Design")], size=18)
    assert fields.read_fields(layout.read_layout(content, "application/pdf"))["supplier_name"]["value"] == \
        "Quillfeather Design"
    assert value("Thank you for your order.", "supplier_name") is None  # a sentence is not a name


def test_a_label_glued_to_its_amount_is_still_read():
    assert value("RAZEM DO ZAPŁATY65 786,85 zł", "total_amount") == "65786.85"


def test_uk_and_swiss_vat_numbers_are_checked_by_their_own_rules():
    assert read("VAT Reg. No. GB 980 7806 84")["vat_id"]["normalized"] == "GB980780684"
    swiss = read("Numéro de TVA: CHE-116.281.710 TVA")["vat_id"]
    assert (swiss["value"], swiss["normalized"], swiss["country"]) == ("CHE-116.281.710 TVA", "CHE116281710", "CH")


def test_a_bare_number_sign_beside_a_number_on_an_invoice():
    assert value("FACTURA\nNº        FV25-53649", "invoice_number") == "FV25-53649"
    assert value("Pos   Nr.   Artikel\n1   2   Schraube", "invoice_number") is None


def test_the_return_address_over_the_window_names_the_supplier_and_marks_the_buyers_address():
    text = ("Zebra Software GmbH · Somestreet 42 · 08155 Some city\n"
            "Beispiel AG\nFeldstraße 34\n54321 Hithausen\n\nRechnung RE1001\n")
    assert value(text, "supplier_name") == "Zebra Software GmbH"
    text = text.replace("Zebra Software GmbH", "zebra.example")
    assert value(text, "supplier_name") == "zebra.example"  # not the buyer's legal name under it


def test_a_total_column_under_its_header_gives_its_last_row_when_that_row_is_the_sum():
    text = ("Nettobetrag     MwSt-Betrag     Endbetrag\n"
            "321,40          61,07           382,47\n"
            "127,59          8,93            136,52\n"
            "448,99          70,00           518,99\n")
    assert value(text, "total_amount") == "518.99"


def test_an_iban_broken_over_two_lines_under_its_header():
    text = "Bank           IBAN\nSome Bank      DE89 3704 0044 0532\n               0130 00\n"
    assert value(text, "iban") == "DE89 3704 0044 0532 0130 00"


def test_the_date_of_a_letter_by_its_place():
    assert value("München, den 01.11.2024\nDatum: 30.10.2024", "invoice_date") == "2024-11-01"
    assert value("Paris, le 3 mars 2020", "invoice_date") == "2020-03-03"


def test_a_bare_date_header_over_a_line_items_table_is_not_the_invoice_date():
    text = ("Invoice 103767\nFebruary 17, 2026\n"
            "No.      Description        Date        Quantity\n"
            "1908-S   Chair              02/18/26    3\n")
    assert value(text, "invoice_date") == "2026-02-17"


def test_a_printed_deposit_explains_a_total_and_a_smaller_amount_to_pay():
    text = ("TOTAL HT      TOTAL TVA      TOTAL TTC\n"
            "100,00        10,00          110,00\n"
            "Acompte :     10,00\n"
            "NET A PAYER   100,00 EUR\n")
    found = read(text)["total_amount"]
    assert (found["status"], found["value"]) == ("present", "110.00")
    assert found["detail"] == "the amount still to pay is 100.00 after a payment of 10.00"


def test_a_printed_currency_we_do_not_pay_in_is_reported_as_printed_not_missing():
    found = read("Grand Total   Rs 1939")["currency"]
    assert (found["status"], found["value"]) == ("malformed", "INR")
    assert found["evidence"]["text"] == "Grand Total   Rs 1939"


def test_a_gross_price_column_of_a_line_items_table_is_not_the_total():
    text = ("                         Cena                 Wartość\n"
            " Lp  Nazwa       Ilość   brutto     VAT [%]   brutto\n"
            " 1   EFECTA 95   54,910  5,79       23        316,83\n"
            "\nNależność ogółem: 316,83 PLN\n")
    found = read(text)["total_amount"]
    assert (found["status"], found["value"]) == ("present", "316.83")


def test_the_company_on_the_suppliers_vat_line_beats_a_legal_name_in_the_address_window():
    text = ("Kent Retail Ltd\nLange Straat 5\n1000 AB Town\n\nInvoice number  A-77\n\n\n\n\n\n\n"
            "Harbour Tools Ltd - FR40303265045 - NL91ABNA0417164300\n")
    assert value(text, "supplier_name") == "Harbour Tools Ltd"
    text = "Au bon moulin SARL - 1242 chemin de l'olive\nTVA : FR40303265045 - SARL au capital de 120 000,00 €"
    assert value(text, "supplier_name") == "Au bon moulin SARL"  # a legal form alone names nobody


def test_the_footers_vat_id_is_the_issuers_when_an_unlabelled_window_holds_another():
    from agent.reading import layout
    from tests.pdfs import make_pdf

    content = make_pdf([(50, 100, "Kent Retail Ltd"), (50, 112, "VAT FR40303265045"),
                        (50, 300, "Invoice total 120,00 EUR"), (50, 800, "Registered office Lyon, VAT DE136695976")])
    found = fields.read_fields(layout.read_layout(content, "application/pdf"))
    assert found["vat_id"]["value"] == "DE136695976"


@pytest.mark.parametrize("unit", [
    "DE 136 695 977 ",  # a VAT id shape failing its check, over and over
    "DE89 3704 0044 0532 0130 01 ",  # an IBAN shape failing mod 97
    "1.234,56 ",  # amounts
    "Total 1,00 ",  # a total label and an amount
    "12.03.2024 ",  # dates
    "GmbH ",  # legal forms
    "Bill to: ",  # headings
    "Seller: ACME GmbH DE136695976 ",  # headings with a name and a VAT id
])
def test_the_anywhere_rules_are_fast_on_hostile_text(unit):
    text = _fill(unit)
    with finishes_within(BOUND * 2):
        checked = fields.check_all(text, today=TODAY)
    assert set(checked) - set(fields.ALSO_READ) == set(fields.REQUIRED)
    with finishes_within(BOUND * 2):
        fields.check_all(_fill(unit + "\n"), today=TODAY)  # the same, one per line


def test_the_payee_of_the_bank_transfer_names_the_supplier():
    assert value("Bénéficiaire\nNOM : LE FOURNISSEUR\nIBAN : FR14 2004 1010 0505 0001 3M02 606", "supplier_name") == \
        "LE FOURNISSEUR"
    assert value("Kontoinhaber: Nordlicht Handel\nIBAN DE89 3704 0044 0532 0130 00", "supplier_name") == \
        "Nordlicht Handel"


def test_from_and_to_blocks_side_by_side():
    text = ("From:                         To:\n"
            "Acme Ltd                      Zebra GmbH\n"
            "VAT GB980780684               VAT DE136695976\n")
    found = read(text)
    assert (found["supplier_name"]["value"], found["vat_id"]["value"]) == ("Acme Ltd", "GB980780684")


def test_an_information_block_beside_the_address_window_is_not_the_buyers():
    from agent.reading import layout
    from tests.pdfs import make_pdf

    content = make_pdf([
        (50, 110, "Acme Werkzeug GmbH · Hafenweg 2 · 12345 Stadt"),
        (50, 124, "Kunde Bau KG"), (50, 136, "Lindenallee 4"), (50, 148, "54321 Dorf"),
        (380, 124, "Rechnungsnr. R-77"), (380, 136, "USt-IdNr. DE136695976"),
    ])
    found = fields.read_fields(layout.read_layout(content, "application/pdf"))
    assert found["vat_id"]["value"] == "DE136695976"
    assert found["supplier_name"]["value"] == "Acme Werkzeug GmbH"


def test_the_footers_legal_line_names_the_supplier_over_a_legal_name_in_the_window():
    from agent.reading import layout
    from tests.pdfs import make_pdf

    content = make_pdf([(50, 100, "Nowak Handel sp. j."), (50, 112, "ul. Dluga 5"), (50, 300, "Razem 120,00"),
                        (50, 800, "Kowalski Serwis sp. z o.o. - KRS 0000123456")])
    found = fields.read_fields(layout.read_layout(content, "application/pdf"))
    assert found["supplier_name"]["value"] == "Kowalski Serwis sp. z o.o."


def test_the_digit_groups_of_an_iban_after_a_payment_label_are_not_the_total():
    text = ("Bakkerij de Molen B.V.\nFactuurnummer: 2024-118\nTotaal € 717,97\n"
            "Gelieve te betalen op IBAN NL91 ABNA 0417 1643 00\n")
    found = fields.check_all(text, today=date(2026, 1, 1))
    assert found["total_amount"]["value"] == "717.97"
    assert found["iban"]["value"] == "NL91 ABNA 0417 1643 00"


@pytest.mark.parametrize("text, total", [
    ("Base imponible  100,00\nTOTAL (IVA INCL.)          121,00 €", "121.00"),
    ("Totaal excl. btw  100,00\nTotaal (incl. btw)     121,00", "121.00"),
    ("Netto 100,00\nMwSt 4,00\nBrutto 104,00 €", "104.00"),
    ("Net 50.00\nVAT 5.00\nGross 55.00", "55.00"),
])
def test_a_total_with_a_bracketed_qualifier_or_a_bare_gross_label(text, total):
    assert read(text)["total_amount"]["value"] == total


def test_an_amount_in_a_running_sentence_ranks_below_a_labelled_total():
    text = ("Facture 12\nTotal        120,00\n\n"
            "Nous vous rappelons que le montant restant à payer au 1er mars est de 128,00€ selon nos conditions.")
    assert read(text)["total_amount"]["value"] == "120.00"


@pytest.mark.parametrize("text, vat", [
    ("Acme Ltd\nVAT Reg No 980 7806 84\nIBAN GB33BUKB20201555555555", "GB980780684"),  # the IBAN's country
    ("Acme Ltd\n1 High Street\nUnited Kingdom\nVAT Reg No 980 7806 84", "GB980780684"),  # the address's
    ("Acme SL\nCIF: B58378431", "ESB58378431"),  # a letter first
    ("Acme\nNIF: 12345678-Z", "ES12345678Z"),  # a dash before the letter
    ("Acme Srl\nP.IVA 01114601006", "IT01114601006"),
    ("Acme\nNIP 5252248481", "PL5252248481"),
    ("Acme SARL - RCS Lyon - TVA FR 40 303 265 045 - Capital 1000 €", "FR40303265045"),  # spaces inside
])
def test_a_vat_id_without_its_country_prefix_takes_the_labels_or_the_suppliers_country(text, vat):
    found = read(text)["vat_id"]
    assert (found["status"], found["normalized"], found["country"]) == ("present", vat, vat[:2])
    assert found["value"] in text  # as printed: the prefix the page leaves out is not added


def test_an_ibans_first_digits_are_never_a_vat_id():
    found = read("Acme\nKonto: PL52 5224 8481 0000 0000 0000 0076")  # PL + 5252248481 is a valid NIP
    assert found["vat_id"]["status"] == "missing"
    assert found["iban"]["value"] == "PL52 5224 8481 0000 0000 0000 0076"


def test_an_iban_broken_after_its_label_continues_on_the_next_line():
    from agent.reading import layout
    from tests.pdfs import make_pdf

    assert value("Bank details\nIBAN: DE89 3704 0044\n0532 0130 00\nBIC COBADEFFXXX", "iban") == \
        "DE89 3704 0044 0532 0130 00"
    content = make_pdf([(400, 700, "IBAN: DE89 3704 0044"), (400, 712, "0532 0130 00")])
    found = fields.read_fields(layout.read_layout(content, "application/pdf"))
    assert found["iban"]["value"] == "DE89 3704 0044 0532 0130 00"


@pytest.mark.parametrize("text, number", [
    ("Physio Praxis\nHONORARNOTE 25-1187\nDatum 01.02.2025", "25-1187"),  # the title, then its number
    ("Sklep Handel\nFAKTURA\nnr 2024/11/0087\nData wystawienia 2024-11-05", "2024/11/0087"),  # a sign under it
    ("FACTURA                 NUM: 2024/77", "2024/77"),  # a bare label beside the title
    ("FACTUUR\nNR / NO.:  88812", "88812"),  # a two-language bare label under it
    ("NOTA\nNumero 15/2024", "15/2024"),
    ("Rechnung\n\nFolio-Nr.       Zimmer\n4711            12", "4711"),  # "<word>-Nr." over its value
])
def test_an_invoice_number_by_the_title_word_and_the_bare_labels_near_it(text, number):
    assert value(text, "invoice_number") == number


@pytest.mark.parametrize("text, day", [
    ("Acme GmbH\nIhre Rechnung vom 8. September 2024\nBetrag 10,00", "2024-09-08"),
    ("Acme SARL\nVotre facture du 08/09/2024\nÉchéance 08/10/2024", "2024-09-08"),
    ("Acme Srl\nFattura 15 del 8 settembre 2024", "2024-09-08"),
    ("Acme\nFACTURE du 8 septembre 2024\nDate de facture : 01/09/2024", "2024-09-01"),  # the labelled one wins
])
def test_an_unlabelled_invoice_date_in_the_title_phrase(text, day):
    assert read(text)["invoice_date"]["value"] == day


@pytest.mark.parametrize("line", [
    "SIRET 123 456 789 00012", "KvK 12345678", "HRB 12345 Amtsgericht Musterstadt", "C/ Mayor 12",
    "Viale Roma 5", "Hoofdstraat 12", "Musterstr. 5", "FACTURE", "INVOICE 2024-17", "IBAN",
    "J. DOE · MAIN WAY 15 · 12345 TOWN",
])
def test_registration_street_title_and_address_strip_lines_are_no_supplier_name(line):
    assert value(f"{line}\nTotal 10,00", "supplier_name") is None


@pytest.mark.parametrize("heading", ["EMITIDA POR", "Issued by", "Emisor", "Émetteur", "Rechnungssteller"])
def test_an_issuer_heading_opens_the_sellers_block(heading):
    text = f"{heading}\nTalleres Norte\nCalle Mayor 5\n\nCLIENTE\nJuan Perez\n"
    assert value(text, "supplier_name") == "Talleres Norte"


def test_a_job_title_over_a_persons_name_is_not_the_supplier():
    from agent.reading import layout
    from tests.pdfs import make_pdf

    content = make_pdf([(50, 50, "Physiotherapeutin"), (50, 64, "Anna Muster"),
                        (300, 200, "Honorarnote 25-11"), (300, 300, "Gesamt 104,00")])
    assert fields.read_fields(layout.read_layout(content, "application/pdf"))["supplier_name"]["value"] == \
        "Anna Muster"


def test_a_bare_number_label_in_the_block_beside_the_title_but_never_a_table_header():
    from agent.reading import layout
    from tests.pdfs import make_pdf

    content = make_pdf([(50, 40, "Talleres Norte"), (50, 100, "FACTURA"), (350, 112, "Número"), (450, 112, "Fecha"),
                        (350, 124, "A-2024-77"), (450, 124, "05/11/2024")])
    assert fields.read_fields(layout.read_layout(content, "application/pdf"))["invoice_number"]["value"] == \
        "A-2024-77"
    content = make_pdf([(50, 100, "INVOICE"), (50, 130, "No."), (150, 130, "Description"), (300, 130, "Qty"),
                        (50, 142, "1908-S"), (150, 142, "Chair"), (300, 142, "3")])
    assert fields.read_fields(layout.read_layout(content, "application/pdf"))["invoice_number"]["value"] is None


def test_a_row_of_labels_over_their_values_is_no_line_items_header():
    text = ("Kopie factuur\n"
            "Klant            Order            Factuur datum     Factuur          Vervaldatum\n"
            "CL000123         OR000456         8-9-2022          VF2000111222     22-9-2022\n")
    assert fields.check_all(text, today=date(2026, 1, 1))["invoice_number"]["value"] == "VF2000111222"


def test_a_second_account_of_the_issuers_makes_the_iban_to_check_with_both():
    text = ("Hafenkontor Beispiel GmbH · Speicherstraße 4 · 20457 Hamburg\n"
            "Rechnung Nr. HK-3307 vom 02.03.2026\n"
            "Gesamtbetrag EUR 880,00\n"
            "Bankverbindung: IBAN DE89 3704 0044 0532 0130 00\n"
            "Neue Bankverbindung ab sofort: IBAN GB82 WEST 1234 5698 7654 32\n")
    iban = read(text)["iban"]
    assert iban["status"] == "to_check" and "more than one bank account" in iban["detail"]
    assert {c["value"].replace(" ", "") for c in iban["candidates"]} == {
        "DE89370400440532013000", "GB82WEST12345698765432"}
    # The same account printed twice is one account, and a buyer's own account is not the issuer's.
    once = read("IBAN DE89 3704 0044 0532 0130 00\nZahlbar auf DE89370400440532013000\n")["iban"]
    assert once["status"] == "present"
    debit = read("Our account: IBAN DE89 3704 0044 0532 0130 00\n"
                 "Customer IBAN: GB82 WEST 1234 5698 7654 32 (direct debit)\n")["iban"]
    assert debit["status"] == "present" and debit["value"] == "DE89 3704 0044 0532 0130 00"
