"""The total among its decoys, the currency from every clue, the due date, net and VAT amounts, and the
invoices of Norway, Sweden, Denmark, Finland, Portugal and the Czech Republic. Every invoice here is made up."""

from __future__ import annotations

from datetime import date

import pytest

from agent.reading import fields, reading
from agent.review import workflow

TODAY = date(2026, 6, 1)


def read(text: str) -> dict:
    return fields.check_all(text, today=TODAY)


# --- the total among its decoys ------------------------------------------------------------------


def test_a_paid_invoice_whose_balance_due_is_zero_keeps_its_total():
    text = ("Kestrel Audio Pty Ltd\nTax Invoice 5521\nDate: 02/03/2026\n"
            "Subtotal        410.00\nGST        41.00\nTotal        451.00\n"
            "Amount paid        451.00\nBalance due        0.00\n")
    found = read(text)["total_amount"]
    assert (found["status"], found["value"]) == ("present", "451.00")
    assert found["detail"] == "the amount still to pay is 0.00 after a payment of 451.00"


def test_a_balance_left_after_a_part_payment_is_reported_beside_the_total():
    text = ("Invoice 88\nBalance Due:        $1,250.00\nSubtotal:        $3,000.00\nDiscount (5%):   $150.00\n"
            "Tax (10%):        $285.00\nTotal:        $3,135.00\nAmount Paid        $1,885.00\n")
    found = read(text)["total_amount"]
    assert (found["value"], found["detail"]) == ("3135.00", "the amount still to pay is 1250.00 after a payment "
                                                 "of 1885.00")


def test_a_bare_total_that_is_the_net_loses_to_the_amount_due_net_plus_tax_makes():
    text = "Invoice 7\nTotal        200.00\nSales tax        16.50\nAmount due        216.50\n"
    assert read(text)["total_amount"]["value"] == "216.50"


def test_a_totals_block_of_labels_over_their_amounts_reads_the_totals_row():
    text = ("Factuur 2026-118\nSubtotaal\nBTW 21%\nTotaal\n"
            "1.000,00\n210,00\n1.210,00\n")
    found = read(text)
    assert found["total_amount"]["value"] == "1210.00"
    assert (found["net_amount"]["value"], found["vat_amount"]["value"]) == ("1000.00", "210.00")


def test_a_negative_sum_of_another_kind_never_beats_a_total_including_vat():
    text = ("Afrekening 31\nTotaal verkochte artikelen (incl. btw)        € 845,20\n"
            "Totaal jouw uitbetaling        € -12.904,77\n")
    assert read(text)["total_amount"]["value"] == "845.20"


def test_a_total_printed_without_a_label_is_the_one_net_plus_vat_make():
    text = "Faktura 77\nZáklad daně        2 400,00 Kč\nDPH 21 %        504,00 Kč\n        2 904,00 Kč\n"
    found = read(text)["total_amount"]
    assert found["value"] == "2904.00" and "net plus VAT" in found["detail"]


# --- the currency --------------------------------------------------------------------------------


@pytest.mark.parametrize("seller, code", [
    ("Tornería del Sur S.R.L.\nCUIT: 30-71234567-1\nAv. Belgrano 1200, Córdoba", "ARS"),
    ("Kestrel Audio Pty Ltd\nABN 51 824 753 556\n12 Wattle St, Fitzroy VIC 3065", "AUD"),
    ("Blue Heron Supply LLC\n400 Canal Street\nPortland, OR 97209", "USD"),
    ("Maple Row Bakery Inc.\n88 King St W\nToronto ON M5H 1J9", "CAD"),
    # a Quebec receipt names its federal tax TPS, alone, with no postcode OCR kept
    ("Casse-Croûte Chez Lise\nSous-total        18,00 $\nTPS        0,90 $", "CAD"),
    # a till slip with only its telephone: a North American number, no Canadian postcode or tax before it
    ("Corner Hardware #12\n(317) 861-1102", "USD"),
    ("Corner Hardware #12\n88 King St W\nToronto ON M5H 1J9\n416-555-0182", "CAD"),
])
def test_a_dollar_sign_alone_takes_the_currency_of_the_sellers_country(seller, code):
    found = read(f"{seller}\nInvoice 12\nTotal        $ 1,200.00\n")["currency"]
    assert found["value"] == code  # ARS is read, and then reported as not a currency we pay in
    assert found["status"] == ("present" if code in fields.CURRENCIES else "malformed")


@pytest.mark.parametrize("line", ["Ref 2026-861-1102", "Tel +44 020-7946-0958", "Order 123.456.7890.1"])
def test_numbers_shaped_like_a_telephone_but_not_north_american_give_no_country(line):
    found = read(f"{line}\nInvoice 12\nTotal        $ 1,200.00\n")["currency"]
    assert (found["status"], found["value"]) == ("to_check", None)


def test_a_dollar_sign_with_no_country_on_the_page_is_to_check():
    found = read("Invoice 12\nTotal        $ 1,200.00\n")["currency"]
    assert (found["status"], found["value"]) == ("to_check", None)
    assert "several countries" in found["detail"]


def test_a_dollar_code_printed_on_the_page_decides_over_the_country():
    text = "Blue Heron Supply LLC\nPortland, OR 97209\nInvoice 12\nAll amounts in CAD\nTotal        $ 1,200.00\n"
    assert read(text)["currency"]["value"] == "CAD"


@pytest.mark.parametrize("text, code", [
    ("Rechnung 5\nGesamtbetrag        EUR1.234,00\n", "EUR"),  # a code glued before the amount
    ("Rechnung 5\nGesamtbetrag        1.234,00EUR\n", "EUR"),  # and after it
    ("Factura 5\nRFC: ABC010203XY1\nSon: mil doscientos pesos 00/100 M.N.\n", "MXN"),  # a word and the country
    ("Fatura 5\nSão quinhentos reais.\n", "BRL"),
    ("Faktura 5\nBeløpet betales i norske kroner.\n", "NOK"),
    ("Invoice 5\nPayable in Canadian dollars.\nTotal        1,200.00\n", "CAD"),
    ("Arve 5\nSumma sõnadega: kakssada eurot ja 10 senti.\nKokku        200,10\n", "EUR"),  # an Estonian word
])
def test_the_currency_from_codes_glued_to_amounts_and_from_words(text, code):
    assert read(text)["currency"]["value"] == code


def test_a_tills_capital_kr_is_the_crown_and_a_card_named_euro_something_no_currency():
    text = ("Sjöbris Kiosk\nHamngatan 2, 211 22 Malmö\nOrg.nr 556036-0793\nTOTALT        64,00 KR\n"
            "Betalt med Eurocard        64,00\n")
    assert read(text)["currency"]["value"] == "SEK"
    paid_by_card = "Kiosk\nTotalt        64,00\nBetalt med Eurocard        64,00\n"
    assert read(paid_by_card)["currency"]["value"] is None


def test_kroner_signs_take_the_country_of_the_seller():
    text = "Fjellbu Snekkeri AS\nStorgata 4, 0155 Oslo, Norge\nFaktura 9\nÅ betale        kr 4 500,00\n"
    assert read(text)["currency"]["value"] == "NOK"


# --- the next fields accounts payable needs --------------------------------------------------------


def test_due_net_and_vat_are_read_and_net_plus_vat_is_checked_against_the_total():
    text = ("Invoice INV-311\nInvoice date: 10 March 2026\nDue date: 9 April 2026\n"
            "Net amount        500.00\nVAT 20%        100.00\nTotal due        600.00\n")
    found = read(text)
    assert (found["due_date"]["status"], found["due_date"]["value"]) == ("present", "2026-04-09")
    assert found["net_amount"]["value"] == "500.00" and found["vat_amount"]["value"] == "100.00"
    assert found["net_amount"]["detail"] == "net + VAT = the total"
    assert found["vat_amount"]["evidence"]["text"].startswith("VAT 20%")


def test_net_and_vat_that_do_not_make_the_total_are_to_check():
    text = "Invoice 4\nSubtotal        500.00\nVAT        90.00\nTotal        600.00\n"
    found = read(text)["net_amount"]
    assert found["status"] == "to_check" and "not the total 600.00" in found["detail"]


def test_per_rate_vat_lines_add_up_to_the_vat_amount():
    text = ("Rechnung 8\nNettobetrag        300,00\nMwSt 19%        38,00\nMwSt 7%        7,00\n"
            "Gesamtbetrag        345,00\n")
    assert read(text)["vat_amount"]["value"] == "45.00"


def test_a_vat_line_that_prints_the_net_gives_the_net_not_the_vat():
    text = ("The Quill & Ferret\nAle x2        7.20\nVAT 20% Net        6.00\nVAT 20%        1.20\n"
            "VAT 20% Total        7.20\nTotal        GBP 7.20\n")
    found = read(text)
    assert (found["net_amount"]["value"], found["vat_amount"]["value"]) == ("6.00", "1.20")
    assert found["vat_amount"]["evidence"]["text"].startswith("VAT 20%   1.20")


def test_a_vat_amount_as_large_as_the_total_is_never_the_vat():
    text = "Bistro Lumen\nIVA inclusa        18,30\nTotale IVA        18,30\nTotale        18,30\n"
    assert read(text)["vat_amount"]["status"] == "missing"


def test_an_unlabelled_net_is_the_printed_amount_the_total_less_its_vat_makes():
    text = ("Bäckerei Kornfeld\nBrezel        1,90\nKaffee        2,60\nUMSATZ A        3,78\n"
            "MWST A 19%        0,72\nSUMME        EUR 4,50\n")
    found = read(text)
    assert (found["net_amount"]["value"], found["vat_amount"]["value"]) == ("3.78", "0.72")
    assert found["net_amount"]["evidence"]["text"].startswith("UMSATZ A")


def test_a_total_with_no_vat_on_it_is_all_net():
    text = ("Harbour Freight Forwarding\nInvoice 7781\nOcean freight        1,240.00\n"
            "Tax        0.00\nInvoice total        USD 1,240.00\n")
    found = read(text)
    assert (found["net_amount"]["value"], found["vat_amount"]["value"]) == ("1240.00", "0.00")
    assert found["net_amount"]["status"] == "present"


def test_a_vat_behind_a_tax_class_and_rate_is_the_total_less_the_subtotal_on_a_tax_line():
    text = ("Corner Drugstore\nSUBTOTAL        41.10\nSALES TAX B=8.875%        3.65\n"
            "CASHIER 4\nTOTAL        44.75\n")
    found = read(text)
    assert (found["net_amount"]["value"], found["vat_amount"]["value"]) == ("41.10", "3.65")
    assert found["vat_amount"]["detail"] == "net + VAT = the total"


def test_a_printed_amount_on_no_tax_line_is_never_taken_for_the_vat():
    text = "Corner Drugstore\nSUBTOTAL        41.10\nCASHIER 3.65\nTOTAL        44.75\n"
    assert read(text)["vat_amount"]["status"] == "missing"


def pdf_read(items: list[tuple[float, float, str]], size: float = 9) -> dict:
    """The fields read off a one-page PDF with each text at (x, y) in points, all in one size."""
    from .test_parties import pdf_fields

    return pdf_fields([(x, y, text, size) for x, y, text in items])


def test_a_breakdown_by_rate_is_no_total_though_its_column_is_headed_gross():
    found = pdf_read([(60, 60, "Rechnung 4411"), (60, 120, "Roggenbrot"), (300, 120, "1"), (440, 120, "2,99 EUR"),
                      (60, 134, "Kaffee 500 g"), (300, 134, "1"), (440, 134, "6,43 EUR"),
                      (360, 160, "Summe:"), (440, 160, "9,42 EUR"),
                      (60, 200, "Steuersatz"), (180, 200, "Nettobetrag"), (300, 200, "MwSt. Betrag"),
                      (440, 200, "Gesamtbetrag"),
                      (60, 214, "A = 19%"), (180, 214, "2,51 EUR"), (300, 214, "0,48 EUR"), (440, 214, "2,99 EUR"),
                      (60, 228, "B = 7%"), (180, 228, "5,99 EUR"), (300, 228, "0,44 EUR"), (440, 228, "6,43 EUR")])
    assert found["total_amount"]["value"] == "9.42"


def test_a_totals_row_in_whole_units_gives_the_net_and_a_vat_of_nothing():
    found = pdf_read([(60, 60, "Invoice 9041"), (60, 200, "Excl. VAT"), (250, 200, "VAT SEK"), (440, 200, "TO PAY"),
                      (60, 214, "12400"), (250, 214, "0"), (440, 214, "12400 SEK")])
    assert found["total_amount"]["value"] == "12400.00"
    assert (found["net_amount"]["value"], found["vat_amount"]["value"]) == ("12400.00", "0.00")


def test_a_totals_row_may_print_another_tax_between_the_vat_and_the_gross():
    text = ("Factura 88\nSUBTOTAL        NETO        IVA        PERCEPCIONES        TOTAL\n"
            "4.200,00        4.200,00        882,00        0,00        5.082,00\n")
    found = read(text)
    assert (found["total_amount"]["value"], found["net_amount"]["value"], found["vat_amount"]["value"]) == (
        "5082.00", "4200.00", "882.00")


def test_a_vat_line_with_a_currency_sign_after_its_rate_reads_its_amount_not_its_rate():
    text = ("Factura 12\nImporte Neto Gravado: $        1000,00\nIVA 10.5%: $        0,00\n"
            "IVA 21%: $        210,00\nImporte Total: $        1210,00\n")
    found = read(text)
    assert (found["net_amount"]["value"], found["vat_amount"]["value"]) == ("1000.00", "210.00")


def test_a_vat_id_label_is_never_a_vat_amount():
    text = "Acme Ltd\nVAT Reg No 980 7806 84\nInvoice 4\nTotal        120.00\n"
    assert read(text)["vat_amount"]["status"] == "missing"


def test_a_due_date_printed_before_the_invoice_date_label_is_not_the_invoice_date():
    text = "Rechnung 2026-41\nZahlbar bis: 30.04.2026\nRechnungsdatum: 31.03.2026\nGesamtbetrag 99,00 €\n"
    found = read(text)
    assert found["invoice_date"]["value"] == "2026-03-31" and found["due_date"]["value"] == "2026-04-30"


def test_a_due_date_before_the_invoice_date_is_to_check():
    found = read("Invoice 3\nInvoice date: 2026-03-31\nDue date: 2026-03-01\n")["due_date"]
    assert (found["status"], found["detail"]) == ("to_check", "the due date is before the invoice date")


def test_fields_read_only_when_printed_are_never_counted_as_not_found():
    text = "Acme GmbH\nInvoice 3\nInvoice date: 2026-03-31\n"
    found = read(text)
    assert {found[name]["status"] for name in ("due_date", "net_amount", "vat_amount")} == {"missing"}
    checked = reading.validate(reading.extract(None, "", text, today=TODAY), today=TODAY)
    assert set(checked["fields"]) == set(fields.REQUIRED) and checked["also_read"] == {}
    present = {name: {"status": "present", "value": "x", "detail": ""} for name in fields.REQUIRED}
    assert workflow.summarize({"fields": present, "also_read": checked["also_read"], "readable": True}).outcome == "ok"


# --- numbers and dates ranked by their labels ----------------------------------------------------------


@pytest.mark.parametrize("line, number", [
    ("Punto de Venta: 00012        Comp. Nro: 00000417", "00012-00000417"),
    ("NUMERO:        00012 - 00000417", "00012-00000417"),
])
def test_an_argentine_invoice_is_numbered_at_its_point_of_sale(line, number):
    found = read(f"FACTURA\nA\n{line}\nFecha de Emisión: 03/05/2024\n")["invoice_number"]
    assert found["value"] == number


def test_a_till_slips_number_after_a_bare_sign_in_its_header_wins_over_its_terminal_id():
    text = ("Sjöbris Kiosk\nHamngatan 2, 211 22 Malmö\nSälj: 221        Kassa: 3        Nr: 4187\n"
            "Datum: 2026-02-11\nTOTALT        64,00 kr\nTerminal-ID 7731-0042-9912\n")
    assert read(text)["invoice_number"]["value"] == "4187"
    assert read(text.replace("Nr: 4187", "Nr: 7"))["invoice_number"]["value"] != "7"  # a till's, not a slip's
    register = "Sklep Pod Lipą\nNr BDO 000041177\nNIP 526-030-09-17\nSUMA PLN        29,12\n"
    assert read(register)["invoice_number"]["value"] is None  # the waste register's number, not the slip's


@pytest.mark.parametrize("line, number", [
    ("Invoice no. 2024 00123", "2024 00123"),
    ("FACTURA DE VENTA: C11 4471", "C11 4471"),
    ("Rechnung Nr. 2026 0815 vom 05.03.2026", "2026 0815"),
    ("Invoice no. 2024-001 Customer no. 77", "2024-001"),  # a word ends the number
    ("Invoice no. 4471 12.03.2026", "4471"),  # a date is no group of the number
    ("Rechnung Nr. 2026 / 118", "2026/118"),  # a series and its number, a spaced slash between them
    ("Factura nº B7 / 2210 de 15/05/2026", "B7/2210"),
    ("Invoice No. 4471 / Page 1 of 2", "4471"),  # a word after the slash: no group
    # A space printed after a separator inside the number: no number ends on its separator.
    ("Faktura VAT 0311/24/ 5520-7781", "0311/24/5520-7781"),
    ("Rechnung RE-2026- 00417 vom 05.03.2026", "RE-2026-00417"),
])
def test_an_invoice_number_keeps_the_groups_its_label_says_are_one_number(line, number):
    assert read(f"{line}\nTotal 10,00 €\n")["invoice_number"]["value"] == number


@pytest.mark.parametrize("line, number", [
    ("Ticket #: 00417", "00417"),
    ("Transaction No. 55012", "55012"),
    ("Número da NFS-e: 1204", "1204"),
])
def test_receipts_number_labels(line, number):
    assert read(f"{line}\nTotal 10,00\n")["invoice_number"]["value"] == number


@pytest.mark.parametrize("text, day", [
    ("Invoice\nMeter reading date: 01.02.2026\nIssued 14.02.2026\nTotal 10,00", "2026-02-14"),
    ("Permit\nExpiration date: 30.06.2026\nPurchase: 14.02.2026\nTotal 10,00", "2026-02-14"),
])
def test_dates_of_other_things_are_not_the_invoice_date(text, day):
    assert read(text)["invoice_date"]["value"] == day


@pytest.mark.parametrize("text, total", [
    ("Factura 2208\nTotal        400.00       76.00\nSemnatura        Total de plata (col 5 + col 6)\n"
     "Data 3.02.2026        476.00\n", "476.00"),
])
def test_a_labels_own_words_in_parentheses_hold_no_amount(text, total):
    assert read(text)["total_amount"]["value"] == total


@pytest.mark.parametrize("text, day", [
    ("Sklep Pod Lipami\nNIP: 731-05-11-208\n2026-02-14\nSUMA PLN 10,00", "2026-02-14"),  # "05-11-20" is the id's
    ("Kiosk am Hafen\nBeleg 12-03-265\n14.02.2026 11:56\nSumme 10,00", "2026-02-14"),  # "12-03-26" and a digit
    ("Corner Shop\nRef 4471-05-03-26-9\n14/02/2026\nTotal 10.00", "2026-02-14"),
])
def test_a_longer_number_of_groups_holds_no_date(text, day):
    assert read(text)["invoice_date"]["value"] == day


# --- five more languages ----------------------------------------------------------------------------


def test_a_norwegian_invoice():
    text = ("Fjellbu Snekkeri AS\nStorgata 4, 0155 Oslo\nFAKTURA\nFakturanr.:        2207\n"
            "Fakturadato:        12.01.2026\nForfallsdato:        26.01.2026\n"
            "Sum eks. mva        8 000,00\nMva 25 %        2 000,00\nÅ betale        NOK 10 000,00\n")
    found = read(text)
    assert [found[n]["value"] for n in ("invoice_number", "invoice_date", "due_date", "total_amount", "currency",
                                        "net_amount", "vat_amount")] == [
        "2207", "2026-01-12", "2026-01-26", "10000.00", "NOK", "8000.00", "2000.00"]


def test_a_swedish_invoice():
    text = ("Lindqvist Måleri AB\nFaktura\nFakturanummer: 1043\nFakturadatum: 3 februari 2026\n"
            "Förfallodatum: 5 mars 2026\nSumma exkl. moms        4 000,00 kr\nMoms 25 %        1 000,00 kr\n"
            "Att betala        5 000,00 SEK\n")
    found = read(text)
    assert [found[n]["value"] for n in ("invoice_number", "invoice_date", "due_date", "total_amount", "currency",
                                        "net_amount", "vat_amount")] == [
        "1043", "2026-02-03", "2026-03-05", "5000.00", "SEK", "4000.00", "1000.00"]


def test_a_danish_invoice():
    text = ("Holm & Bach ApS\nFaktura nr. 5560\nFakturadato: 2. marts 2026\nForfaldsdato: 16. marts 2026\n"
            "Beløb ekskl. moms        1.600,00\nMoms        400,00\nAt betale        DKK 2.000,00\n")
    found = read(text)
    assert [found[n]["value"] for n in ("invoice_number", "invoice_date", "due_date", "total_amount", "currency",
                                        "net_amount", "vat_amount")] == [
        "5560", "2026-03-02", "2026-03-16", "2000.00", "DKK", "1600.00", "400.00"]


def test_a_portuguese_invoice():
    text = ("Oficina Ribeiro, Lda.\nFatura n.º FT 2026/318\nData de emissão: 9 de abril de 2026\n"
            "Data de vencimento: 9 de maio de 2026\nTotal sem IVA        250,00 €\nIVA 23%        57,50 €\n"
            "Total a pagar        307,50 €\n")
    found = read(text)
    assert [found[n]["value"] for n in ("invoice_number", "invoice_date", "due_date", "total_amount", "currency",
                                        "net_amount", "vat_amount")] == [
        "FT 2026/318", "2026-04-09", "2026-05-09", "307.50", "EUR", "250.00", "57.50"]


def test_a_brazilian_utility_bill_is_numbered_after_its_title_and_its_street_is_no_supplier():
    found = pdf_read([(60, 50, "Rua Tenente Coronel Cardoso, 214"), (60, 62, "Águas do Vale Saneamento S.A."),
                      (330, 50, "NOTA FISCAL Nº 48 - SÉRIE 3"), (330, 62, "Data de emissão: 11/09/2024"),
                      (60, 120, "MARIA DAS DORES LIMA"), (60, 132, "Av. Brasil 77, Centro"),
                      (60, 144, "37200-000 LAVRAS, MG"),
                      (60, 190, "Nº DO CLIENTE"), (240, 190, "Nº DA LIGAÇÃO"),
                      (60, 202, "7781203"), (240, 202, "2204519"),
                      (330, 240, "Total a pagar"), (460, 240, "R$ 63,18")])
    assert found["invoice_number"]["value"] == "48"
    assert found["supplier_name"]["value"] == "Águas do Vale Saneamento S.A."
    assert found["buyer_name"]["value"] != "Nº DA LIGAÇÃO"


def test_a_portuguese_street_line_is_never_the_supplier():
    found = pdf_read([(60, 50, "Rua Tenente Coronel Cardoso"), (330, 50, "NOTA FISCAL Nº 48 - SÉRIE 3"),
                      (330, 62, "Data de emissão: 11/09/2024"), (330, 240, "Total a pagar"), (460, 240, "R$ 63,18")])
    assert found["supplier_name"]["value"] != "Rua Tenente Coronel Cardoso"


def test_a_brazilian_nota_fiscal_is_numbered_by_the_bare_sign_under_its_title():
    text = ("Serralheria Boa Vista Ltda        NF-e\n"
            "Rua das Acácias, 91        Nº 000.004.517\n"
            "Campinas - SP        SÉRIE 1\n"
            "DATA DA EMISSÃO        12/02/2026\n"
            "VALOR TOTAL DA NOTA        2.340,00\n")
    found = read(text)
    assert found["invoice_number"]["value"] == "000.004.517"
    assert found["invoice_date"]["value"] == "2026-02-12"


def test_an_estonian_invoice():
    text = ("Puidukoda OÜ\nRegistrikood 12345678\nARVE NR 2026-118        Maksetähtaeg: 20.02.2026\n"
            "Arve kuupäev: 06.02.2026\nSumma käibemaksuta        1 000,00\nKäibemaks 22%        220,00\n"
            "Tasuda        1 220,00 EUR\n")
    found = read(text)
    assert [found[n]["value"] for n in ("invoice_number", "invoice_date", "due_date", "total_amount", "currency",
                                        "net_amount", "vat_amount")] == [
        "2026-118", "2026-02-06", "2026-02-20", "1220.00", "EUR", "1000.00", "220.00"]


def test_a_distance_in_kilometres_is_no_estonian_vat_amount():
    text = "Rancho Alto S.A.\nRuta 9 km 34.5, Salta\nFactura 12\nTotal        121,00\n"
    assert "vat_amount" not in {n for n, f in read(text).items() if f.get("value")}


def test_a_czech_invoice():
    text = ("Truhlářství Novák s.r.o.\nFaktura č. 2026-0042\nDatum vystavení: 4. 3. 2026\n"
            "Datum splatnosti: 18. 3. 2026\nCelkem bez DPH        10 000,00 Kč\nDPH 21 %        2 100,00 Kč\n"
            "Celkem k úhradě        12 100,00 Kč\n")
    found = read(text)
    assert [found[n]["value"] for n in ("invoice_number", "invoice_date", "due_date", "total_amount", "currency",
                                        "net_amount", "vat_amount")] == [
        "2026-0042", "2026-03-04", "2026-03-18", "12100.00", "CZK", "10000.00", "2100.00"]


def test_a_finnish_invoice():
    text = ("Kuusela Putkityö Oy\nY-tunnus 2345678-1\nLASKU\nLaskun numero:        3391\n"
            "Laskun päivämäärä:        14.4.2026\nEräpäivä:        28.4.2026\nViitenumero:        33917\n"
            "Veroton summa        2 000,00\nAlv 25,5 %        510,00\nMaksettava yhteensä        2 510,00 EUR\n")
    found = read(text)
    assert [found[n]["value"] for n in ("invoice_number", "invoice_date", "due_date", "total_amount", "currency",
                                        "net_amount", "vat_amount")] == [
        "3391", "2026-04-14", "2026-04-28", "2510.00", "EUR", "2000.00", "510.00"]


def test_a_finnish_invoice_dated_in_words_with_its_seller_under_its_heading():
    text = ("Myyjä:\nPohjolan Kirjapaino Oy\nTehtaankatu 7, 33100 Tampere\nOstaja:\nHirvonen Ky\n"
            "Hyvityslasku nro 77-204\nPäiväys: 3. maaliskuuta 2026\nLoppusumma        124,00 €\n")
    found = read(text)
    assert [found[n]["value"] for n in ("supplier_name", "invoice_number", "invoice_date", "total_amount")] == [
        "Pohjolan Kirjapaino Oy", "77-204", "2026-03-03", "124.00"]


def test_a_finnish_slip_paid_by_card_totals_its_sum_not_the_card_line():
    text = ("Tervetuloa\nKahvila Kanerva\nKuitti nro 5120\n12.05.2026\nKorvapuusti        3,80\n"
            "Kahvi        3,20\nYhteensä        7,00\nKortti        7,00\nAlv 14 %        0,86\n")
    found = read(text)
    assert [found[n]["value"] for n in ("supplier_name", "invoice_number", "total_amount", "vat_amount")] == [
        "Kahvila Kanerva", "5120", "7.00", "0.86"]


def test_a_norwegian_totals_row_gives_net_vat_and_gross_side_by_side():
    text = ("Faktura 61\nBeskrivelse        Beløp        Mva        Beløp\n"
            "Arbeid        1 200,00        300,00        1 500,00\nSum        1 200,00        300,00        1 500,00\n")
    found = read(text)
    assert [found[n]["value"] for n in ("total_amount", "net_amount", "vat_amount")] == [
        "1500.00", "1200.00", "300.00"]


@pytest.mark.parametrize("text", [
    "Real Estate Services Ltd\nInvoice 4\nTotal 120.00\n",  # an English word, no currency
    "Albarán 4\nPeso neto: 12 kg\nTotal 120,00\n",  # "peso" is a weight
])
def test_words_that_are_not_currencies_are_not_read_as_one(text):
    assert read(text)["currency"]["value"] is None


def test_an_abbreviation_with_a_dot_is_no_web_address():
    text = "Tel.no 555 0100\nInvoice 4\nTotal        $ 120.00\n"  # ".no" here is no Norwegian domain
    assert read(text)["currency"]["status"] == "to_check"


def test_a_web_address_tells_the_country():
    text = "Invoice 4\nwww.kestrel-audio.com.au\nTotal        $ 120.00\n"
    assert read(text)["currency"]["value"] == "AUD"


def test_a_card_slips_transaction_number_never_beats_the_invoices_own():
    text = "Card payment\nTrans #: 99812\nAuth code: 4471\nInvoice no. INV-3301\nTotal 48.00\n"
    assert read(text)["invoice_number"]["value"] == "INV-3301"


def test_the_fields_read_when_printed_have_the_shape_of_the_required_ones():
    found = read("Invoice 9\nDue date: 2026-04-30\nSubtotal 10.00\nVAT 2.00\nTotal 12.00\n")
    read_here = {"due_date", "net_amount", "vat_amount"}
    assert read_here <= set(found) and set(found) - set(fields.REQUIRED) <= set(fields.ALSO_READ)
    for name in read_here:
        assert set(found[name]) == {"status", "value", "detail", "evidence"}, name
        assert found[name]["status"] == "present" and found[name]["evidence"]["page"] == 1, name


def test_a_dates_label_wins_over_the_place_and_date_of_the_letter_printed_above_it():
    text = "München, den 02.11.2025\nRechnung 7711\nRechnungsdatum: 31.10.2025\nGesamtbetrag 50,00 €\n"
    assert read(text)["invoice_date"]["value"] == "2025-10-31"


@pytest.mark.parametrize("text, number", [
    ("Atelier Brun\nNOTE\nRéférence : 2025-117\nTotal 10,00 €\n", "2025-117"),  # the document's own reference
    ("Atelier Brun\nYour reference: PO-7781\nTotal 10,00 €\n", None),  # the buyer's reference is not it
    ("Atelier Brun\nFacture n° F-88\nRéférence : 2025-117\nTotal 10,00 €\n", "F-88"),  # a label wins
])
def test_a_bare_reference_is_the_number_only_when_nothing_names_the_invoice_number(text, number):
    assert read(text)["invoice_number"]["value"] == number


def test_a_total_on_an_appended_page_never_replaces_the_invoices_amount_due():
    from agent.reading.layout import Layout, Line

    lines = [Line(page=1, words=[], text=t) for t in ("Invoice 4410", "Date: 03.02.2026", "Amount due        120.00")]
    lines += [Line(page=2, words=[], text=t) for t in ("WORK ORDER 77", "Parts and labour", "Total        980.00")]
    found = fields.read_fields(Layout(pages=2, lines=lines, sizes=[]), today=TODAY)["total_amount"]
    assert found["value"] == "120.00"


# A Chinese VAT invoice as OCR reads it: the party blocks labelled down their side (购买方, 销售方), one
# character a row, the totals row's net and tax, and the total in words and in figures (小写).
CHINESE_INVOICE = (
    "上海增值税电子普通发票        发票号码: 00412973\n"
    "开票日期: 2025年11月07日\n"
    "购        名    称 : 杭州青禾文具有限公司\n"
    "买        纳税人识别号: 91330102MA27XY8L16\n"
    "方        地址、电话: 杭州市西湖区文三路 88 号 0571-5550188\n"
    "项目名称        数量        金额        税率        税额\n"
    "*纸制品*复印纸        40        1,800.00        13%        234.00\n"
    "合        计        ¥1,800.00        ¥234.00\n"
    "价税合计 (大写)        贰仟零叁拾肆元整        (小写) ¥2,034.00\n"
    "销        名    称 : 上海蓝湾纸业有限公司\n"
    "售        纳税人识别号: 91310115MA1H7K3Q5N\n"
    "方        地址、电话: 上海市浦东新区张江路 12 号 021-5550123\n")


def test_a_chinese_vat_invoice_names_the_seller_of_its_side_labelled_block():
    found = read(CHINESE_INVOICE)
    assert [found[n]["value"] for n in ("supplier_name", "vat_id", "invoice_number", "invoice_date", "total_amount",
                                        "currency")] == [
        "上海蓝湾纸业有限公司", "91310115MA1H7K3Q5N", "00412973", "2025-11-07", "2034.00", "CNY"]
    assert found["buyer_name"]["value"] == "杭州青禾文具有限公司"


def test_a_chinese_taxpayer_id_label_misread_in_its_last_character_still_names_the_id():
    text = CHINESE_INVOICE.replace("售        纳税人识别号", "售        纳税人识别王")
    assert read(text)["vat_id"]["value"] == "91310115MA1H7K3Q5N"
