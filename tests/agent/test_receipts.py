"""Shop receipts: their own number among a payment's ids, their total among what was handed over, the change,
card lines and tips, in the languages the reader knows. Every receipt here is made up."""

from __future__ import annotations

import re
from datetime import date

import pytest

from agent.reading import fields

TODAY = date(2026, 6, 1)


def read(text: str) -> dict:
    return fields.check_all(text, today=TODAY)


# --- the receipt's number ---------------------------------------------------------------------------


@pytest.mark.parametrize("line, number", [
    ("Receipt No. 4471", "4471"),
    ("Bon-Nr. 4711", "4711"),
    ("N° de ticket : 00417", "00417"),
    ("Ticket n° 00418", "00418"),
    ("Nº ticket: 1207", "1207"),
    ("Scontrino n. 0042", "0042"),
    ("Kassabon nr 551", "551"),
    ("Nr paragonu 8831", "8831"),
    ("Kvitt.nr 5521", "5521"),
    ("Kvittonr 8812", "8812"),
    ("Bonnr. 3310", "3310"),
    ("Cupom fiscal nº 001234", "001234"),
    ("Účtenka č. 2026/88", "2026/88"),
])
def test_a_receipts_own_number_under_its_label(line, number):
    assert read(f"{line}\nTotal 10,00\n")["invoice_number"]["value"] == number


@pytest.mark.parametrize("ids", [
    "Terminal ID: 88112233\nTrans. Nr. 5521\n",
    "Kasse 2 Nr. 14\nTransaktion Nr. 99812\n",
    "Card No. 4471\nAuth No. 882211\n",
])
def test_a_payments_ids_never_beat_the_receipts_number(ids):
    text = f"Corner Bakery\n{ids}Bon-Nr. 4711\nSUMME EUR 12,34\n"
    assert read(text)["invoice_number"]["value"] == "4711"


def test_an_invoice_number_label_wins_over_a_receipt_number():
    text = "Receipt #: 1234-5678\nInvoice number: INV-77\nTotal 10.00\n"
    assert read(text)["invoice_number"]["value"] == "INV-77"


def test_a_transaction_id_is_the_number_only_when_nothing_else_is_printed():
    assert read("Kiosk\nTerminal ID: 88112233\nTotal 4,00\n")["invoice_number"]["value"] == "88112233"


# --- the receipt's total ---------------------------------------------------------------------------


@pytest.mark.parametrize("text, total", [
    ("SUMME EUR 12,34\nBetrag gegeben 20,00\nRückgeld 7,66\n", "12.34"),
    ("TOTAL A PAGAR 9,50\nIMPORTE ENTREGADO 20,00\nCAMBIO 10,50\n", "9.50"),
    ("A PAYER 9,50\nMontant espèces 20,00\nRendu 10,50\n", "9.50"),
    ("TOTALE COMPLESSIVO 9,50\nTotale contante 20,00\nResto 10,50\n", "9.50"),
    ("TE BETALEN 9,50\nTotaal contant 20,00\nWisselgeld 10,50\n", "9.50"),
    ("SUMA PTU 2,30\nSUMA PLN 12,30\nRazem gotówka 50,00\nReszta 37,70\n", "12.30"),
    ("Amount due 20.69\nCash total 40.00\nChange 19.31\n", "20.69"),
    ("Total 20.69\nTotal tip 30.00\n", "20.69"),
    ("Å BETALE 129,00\nSum kontant 200,00\nVeksel 71,00\n", "129.00"),
    ("ATT BETALA 89,00\nSumma kontant 100,00\nVäxel 11,00\n", "89.00"),
    ("AT BETALE 129,00\nI alt kontant 200,00\nByttepenge 71,00\n", "129.00"),
    ("TOTAL A PAGAR 9,50\nValor total dinheiro 20,00\nTroco 10,50\n", "9.50"),
    ("Celkem k úhradě 129,00\nCelkem hotově 200,00\nVráceno 71,00\n", "129.00"),
])
def test_a_receipts_total_among_cash_change_card_and_tips(text, total):
    assert read(f"Corner Shop\n{text}")["total_amount"]["value"] == total


# --- the shop's name on the receipt's header -----------------------------------------------------------


@pytest.mark.parametrize("text, shop", [
    ("FRISCH UND REGIONAL\nBAECKEREI SONNENKORN\nHauptstrasse 12\n80331 Muenchen\nTel. 089 123456\n"
     "Bon-Nr. 4711\nSUMME EUR 12,34\nGegeben BAR 20,00\nRückgeld 7,66\n", "BAECKEREI SONNENKORN"),
    ("LA QUALITE AU QUOTIDIEN\nSUPERMARCHE DU PORT\n12 rue du Port\n13002 Marseille\nTel 04 91 00 00 00\n"
     "Ticket n° 00418\nA PAYER 9,50\nRendu 10,50\n", "SUPERMARCHE DU PORT"),
    ("Smaki Domowe Codziennie\nPIEKARNIA KLOS\nNIP 525-000-00-00\nPARAGON FISKALNY\nSUMA PLN 12,30\n"
     "Reszta 37,70\n", "PIEKARNIA KLOS"),
])
def test_a_receipts_shop_is_the_name_over_its_address_block_not_the_tagline_above(text, shop):
    assert read(text)["supplier_name"]["value"] == shop


def test_an_invoice_without_receipt_signs_keeps_its_evidence_ranking():
    # No receipt's number, title or payment line: the header rule stays out (the two names stay close).
    text = ("FRISCH UND REGIONAL\nBAECKEREI SONNENKORN\nHauptstrasse 12\n80331 Muenchen\n"
            "Rechnung Nr. 4711\nSumme 12,34\n")
    assert read(text)["supplier_name"]["status"] == "to_check"


@pytest.mark.parametrize("title", ["Receipt", "Refund", "Kassenbon"])
def test_a_document_titled_as_a_receipt_is_numbered_by_its_receipt_number(title):
    text = (f"Northwind Audio Inc.        {title}\nReceipt number        7781-0042\nInvoice number        A9C2-0001\n"
            "Total        $6.99\n")
    assert read(text)["invoice_number"]["value"] == "7781-0042"


def test_a_receipts_header_misread_by_a_letter_takes_the_spelling_the_receipt_repeats():
    text = ("Brightmarl\n#0412 55 W 2ND AVE\nPORTLAND, OR 97201\n503-555-0142\nMILK 2.49\nSUBTOTAL 2.49\n"
            "TOTAL 2.49\nVISA 2.49\nCHANGE .00\nTHANK YOU FOR SHOPPING AT BRIGHTMART\nBRIGHTMART REWARDS\n")
    assert read(text)["supplier_name"]["value"] == "Brightmart"


def test_a_header_word_printed_once_with_no_near_spelling_repeated_is_kept():
    text = "Brightmarl\n55 Main St\nTOTAL 2.49\nVISA 2.49\nBRIGHTMART\n"
    assert read(text)["supplier_name"]["value"] == "Brightmarl"


@pytest.mark.parametrize("served", ["Sur place", "A emporter", "Take away", "Zum Mitnehmen", "Para llevar"])
def test_how_a_meal_is_served_is_never_the_restaurants_name(served):
    text = f"{served}\nRestaurant Le Grill\nRCS Marseille 490 359 825\nTotal commande 1,10 EUR\nCARTE BANCAIRE\n"
    assert read(text)["supplier_name"]["value"] == "Restaurant Le Grill"


@pytest.mark.parametrize("decoy, total", [
    ("SPARA KVITTOT - KUNDENS EXEMPLAR", "Totalt 45,00"),
    ("KUNDENS KOPI", "Totalt 45,00"),
    ("TAK FOR BESØGET", "I alt 45,00"),
    ("SUBTOTAL", "TOTAL 45.00"),
    ("Uhrzeit Filiale Kasse Bon", "SUMME EUR 45,00"),
])
def test_a_till_slips_copy_marks_thanks_and_labels_are_never_the_shops_name(decoy, total):
    assert read(f"{decoy}\nHavsbrisen Kiosk\n{total}\n")["supplier_name"]["value"] == "Havsbrisen Kiosk"
    assert read(f"12 Strandvejen\n{decoy}\n{total}\n")["supplier_name"]["value"] is None  # the shop's name unread


def test_a_lone_mark_ocr_read_after_the_shops_name_is_no_part_of_it():
    text = "Restaurant Le Grill §\n12 rue du Port\n13002 Marseille\nTotal commande 1,10 EUR\nCARTE BANCAIRE\n"
    assert read(text)["supplier_name"]["value"] == "Restaurant Le Grill"


# --- a receipt without a total line -----------------------------------------------------------------


def test_an_items_tables_total_column_is_no_total_and_the_amount_paid_is():
    """A museum's ticket: "Total" heads its items' amounts; what the visitor paid is the receipt's sum."""
    text = ("Musée de la Batellerie\nReçu        03/04/2026 10h15\n"
            "Article        Qté        Total\n"
            "Visite guidée        1        8,00 €\n"
            "Audioguide        1        4,50 €\n"
            "Payé        12,50 €\n")
    total = read(text)["total_amount"]
    assert total["value"] == "12.50"
    assert total["detail"] == "no total printed: read as the amount paid"


def test_the_amount_received_is_a_receipts_sum_when_no_total_is_printed():
    text = ("Corner Mart\nTAX INVOICE\n2026-02-14 15:41\nTea cups (* 1)        $12.98\nGST        $1.69\n"
            "Subtotal        $12.98\nReceived        $12.98\nMethod        Card\n")
    total = read(text)["total_amount"]
    assert total["value"] == "12.98" and total["detail"] == "no total printed: read as the amount paid"


def test_two_different_amounts_paid_without_a_total_give_no_total():
    text = ("Kiosk am Hafen\nReceipt 88\nItem        Price\nCoffee        2.50\nPaid        2.50\nPaid        5.00\n")
    assert read(text)["total_amount"]["value"] is None


# --- a receipt read by OCR -----------------------------------------------------------------------


def scanned(text: str, conf: float = 90.0) -> dict:
    """The fields of ``text`` laid out as OCR reads a page: each word boxed where it stands, with a confidence."""
    from agent.reading import layout

    lines = []
    for number, raw in enumerate(text.splitlines()):
        words = [layout.Word(m.group(), 6.0 * m.start(), 20.0 + 14 * number, 6.0 * m.end(), 30.0 + 14 * number, conf)
                 for m in re.finditer(r"\S+", raw)]
        lines.append(layout.Line(page=1, words=words, text=raw))
    return fields.read_fields(layout.Layout(pages=1, lines=lines, sizes=[[595.0, 842.0]]), today=TODAY)


def test_a_year_ocr_misread_with_an_8_for_a_0_is_read_as_the_year_and_left_to_check():
    date_ = scanned("Fromagerie Lessard\nReçu        14/03/2826 11h02\nTotal        7,40 €\n")["invoice_date"]
    assert date_ == date_ | {"status": "to_check", "value": "2026-03-14"}
    assert "2826" in date_["detail"]


def test_a_future_year_in_a_text_layer_or_with_two_readings_stays_malformed():
    assert read("Fromagerie Lessard\nReçu        14/03/2826\nTotal        7,40 €\n")["invoice_date"]["status"] \
        == "malformed"  # a text layer prints what it means
    assert scanned("Fromagerie Lessard\nReçu        14/03/2888\nTotal        7,40 €\n")["invoice_date"]["status"] \
        == "malformed"  # none of 2088, 2808, 2880 is a year of the last ten
