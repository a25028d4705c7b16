"""Till slips as shops in Europe and India print them: the slip's own number under the labels each country's
tills print, the shop's name under a greeting or a slip's title, never those. Every slip here is made up."""

from __future__ import annotations

from datetime import date

import pytest

from agent.reading import fields

TODAY = date(2026, 6, 1)


def read(text: str) -> dict:
    return fields.check_all(text, today=TODAY)


def number(text: str) -> str | None:
    return read(text)["invoice_number"]["value"]


# --- the slip's number, under its country's label ---------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    # Norwegian compounds take a linking "s": "Kvitteringsnr", "Kvitteringsnummer"
    ("Bakeriet Elvebredden\nKvitteringsnr: 7712\nTOTALT 24,90\nBankkort 24,90\n", "7712"),
    ("Sykkelverksted Nord AS\nKasse 4\nKvitteringsnummer 30418\nÅ BETALE 349,00\n", "30418"),
    ("Fiskehallen\nKvitteringsnr. 0093 Kasse 2\nSUM 120,00\nKontant 200,00\nVeksel 80,00\n", "0093"),
])
def test_a_norwegian_slips_number_under_its_compound_label(text, expected):
    assert number(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Hembageriet Solrosen\nKvitto: 3321\nATT BETALA 45,00\nKort 45,00\n", "3321"),
    ("Metzgerei Obermaier\nKasse 2\nBon: 48213\nSUMME EUR 7,80\n", "48213"),
    ("Blumen am Markt\nBeleg: 2207\nGesamt 12,50\nBar 20,00\n", "2207"),
    ("Lakeside Tea Rooms\nTill 3\nReceipt: #55120\nTOTAL 6.40\nCash 10.00\n", "55120"),
    ("Bodega Los Arcos\nTique: 004518\nTOTAL 7,30\nEfectivo 10,00\nCambio 2,70\n", "004518"),
    ("Trattoria Nonna Pina\nCassa 2\nScontrino: 3307\nTOTALE 26,00\n", "3307"),
])
def test_a_slips_word_and_a_colon_before_its_number_label_it(text, expected):
    assert number(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("QUICK STOP #0412\nRCPT# 20931\nTOTAL 5.10\nCASH 10.00\nCHANGE 4.90\n", "20931"),
    ("Corner Deli\nReg 2  Rcpt No 8812\nTOTAL 9.99\n", "8812"),
    ("Cafetería Nube\nTIQUE Nº 000781\nTOTAL 3,10\n", "000781"),
])
def test_a_slips_abbreviated_or_spanish_word_with_a_number_sign(text, expected):
    assert number(text) == expected


def test_a_slips_word_and_a_colon_before_a_word_label_nothing():
    assert number("Blumen am Markt\nBeleg: siehe Rückseite\nGesamt 12,50\n") is None


@pytest.mark.parametrize("text, expected", [
    ("Sklep Rybny Okoń\nNIP 521-000-00-00\nPARAGON FISKALNY\nSUMA PLN 23,10\nNr par. 0815\n", "0815"),
    ("Apteka Pod Lipą\nPARAGON FISKALNY\nSUMA PLN 8,40\nKasa 2 Nr par.: 11942\n", "11942"),
])
def test_a_polish_slips_abbreviated_number_label(text, expected):
    assert number(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Gelateria Lungomare\nSCONTRINO FISCALE N. 0145\nTOTALE EURO 4,50\nCONTANTI 5,00\nRESTO 0,50\n", "0145"),
    ("Ferramenta Bassi\nDOCUMENTO COMMERCIALE n. 0412-0007\ndi vendita o prestazione\nTOTALE COMPLESSIVO 18,90\n",
     "0412-0007"),
    ("Edicola Centrale\nCassa 1\nN. DOC. 2291\nTOTALE 3,20\n", "2291"),
    ("Panificio Aurora\nDoc. n. 0077\nTOTALE COMPLESSIVO 2,40\n", "0077"),
    # A fiscal slip's number beside its date and time ("SF." for scontrino fiscale).
    ("Caffetteria Il Portico\nTOTALE EURO 5,60\nCONTANTE 10,00\nRESTO 4,40\n14-03-19  08:12   SF.  1187\n", "1187"),
    ("Osteria Tre Archi\nTOTALE 31,50\n02/11/18 21:40 S.F. 0093 CASSA 1\n", "0093"),
])
def test_an_italian_slips_number_under_its_document_label(text, expected):
    assert number(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Churrería San Ginés\nFactura simplificada: T-0042/2026\nTOTAL A PAGAR 6,80\nEfectivo 10,00\n", "T-0042/2026"),
    ("Ferretería El Clavo\nFra. simplificada A 12345\nTOTAL 15,20\nTarjeta 15,20\n", "A 12345"),
    ("Pastelaria Doce Lar\nFatura simplificada FS 1/7712\nTOTAL A PAGAR 3,40\nTroco 1,60\n", "FS 1/7712"),
    ("Mercearia Vitória\nDoc. nº 0451\nTotal 9,90\nDinheiro 10,00\n", "0451"),
    ("Padaria Pão Quente\nNFC-e nº 000123 Série 001\nValor a pagar R$ 12,50\n", "000123"),
    ("Loja Estrela\nExtrato No. 004412\nTotal R$ 30,00\n", "004412"),
])
def test_an_iberian_simplified_invoice_or_slip_is_numbered_on_its_line(text, expected):
    assert number(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Pastelaria Doce Lar\nRua Nova 3\nFatura Simplificada\nFS 001/12345\nData: 14-03-2026\nTOTAL 3,40\n",
     "FS 001/12345"),
    ("Bar Pepe\nC/ Sol 2\nFACTURA SIMPLIFICADA\nT001-012345\nFecha: 14/03/2026\nTOTAL 3,40\n", "T001-012345"),
    ("Librería Alba\nFACTURA SIMPLIFICADA\nNº: A-2026-0042\nTOTAL 12,00\n", "A-2026-0042"),
])
def test_a_simplified_invoices_title_alone_is_numbered_under_it(text, expected):
    assert number(text) == expected


@pytest.mark.parametrize("title", ["FACTURA SIMPLIFICADA", "FACTURA", "Fatura Simplificada"])
def test_a_title_over_a_total_line_takes_no_amount_for_its_number(title):
    assert number(f"Bar Pepe\nC/ Sol 2\n{title}\nFecha: 14/03/2026\nTOTAL 3,40\n") is None


def test_a_simplified_invoices_title_alone_never_takes_the_date_under_it():
    text = "Churrería San Ginés\nFactura simplificada\nFecha: 14/03/2026\nTOTAL 6,80\n"
    assert number(text) != "14/03/2026"


@pytest.mark.parametrize("text, expected", [
    ("Pekárna U Mlýna\nPokladní doklad č. 0099\nCelkem 45,00 Kč\nHotově 50,00\n", "0099"),
    ("Květinářství Iris\nDoklad č. 2026/318\nCelkem k úhradě 250,00\n", "2026/318"),
])
def test_a_czech_slips_document_number(text, expected):
    assert number(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("S.C. FLOAREA S.R.L.\nCIF RO12345678\nBON FISCAL\nTOTAL LEI 3,50\nNUMERAR 10,00\nREST 6,50\n"
     "BON FISCAL NR. 0231 CASA 1\n", "0231"),
    ("Farmacia Tei\nCasier: 4\nNr. bon: 88121\nTOTAL 42,00\nCARD 42,00\n", "88121"),
    ("Sweet Corner Bakery\nCash Memo No. 1187\nGrand Total 240.00\nCash 500.00\nChange 260.00\n", "1187"),
])
def test_a_romanian_or_indian_slips_number(text, expected):
    assert number(text) == expected


def test_a_romanian_invoice_read_whole():
    text = ("Furnizor: TIPOGRAFIA NORD S.R.L.\nFactura nr. TN 0417\nData emiterii: 14.03.2026\n"
            "Data scadenței: 13.04.2026\nTotal fără TVA 100,00\nValoare TVA 19,00\nTotal de plată 119,00 RON\n")
    got = read(text)
    assert got["invoice_number"]["value"] == "TN 0417"
    assert got["invoice_date"]["value"] == "2026-03-14"
    assert got["due_date"]["value"] == "2026-04-13"
    assert got["total_amount"]["value"] == "119.00"


# --- a number printed in groups ----------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("Tabaccheria Sole\nDOCUMENTO N. 0012 - 0034\nTOTALE 5,00\n", "0012-0034"),
    ("Osteria del Ponte\nDocumento n. 0007 -0158\nTOTALE COMPLESSIVO 31,00\n", "0007-0158"),
    ("Schreibwaren Kiel\nBeleg-Nr. 2026 0042 15:32\nSumme 4,20\n", "2026 0042"),
])
def test_a_labelled_number_keeps_its_groups_over_a_spaced_hyphen_or_before_the_time(text, expected):
    assert number(text) == expected


def test_a_labelled_number_is_not_joined_to_an_amount_after_a_hyphen():
    assert number("Tabaccheria Sole\nDOCUMENTO N. 0012 - 5,00\nTOTALE 5,00\n") == "0012"


# --- the shop's name, under a greeting or a slip's title -------------------------------------------------


@pytest.mark.parametrize("text, shop", [
    ("Welcome to\nCORNER CAFE\n12 High Street\nLondon N1 2AB\nReceipt No: 00451\nTOTAL 3.20\nCard 3.20\n",
     "CORNER CAFE"),
    ("Velkommen til\nKAFFEBRENNERIET TORGET\nTorggata 3\n0181 Oslo\nKvittering\nTOTALT 45,00\n",
     "KAFFEBRENNERIET TORGET"),
    ("Witamy w\nSKLEP ZIELONY\nul. Długa 4\n80-001 Gdańsk\nPARAGON FISKALNY\nSUMA PLN 9,99\n", "SKLEP ZIELONY"),
    ("Bine ați venit la\nLIBRĂRIA CARTEA\nStr. Lungă 9\nBrașov\nBON FISCAL\nTOTAL LEI 30,00\n", "LIBRĂRIA CARTEA"),
    ("Benvenuti da\nPIZZERIA VESUVIO\nVia Roma 10\n80100 Napoli\nSCONTRINO FISCALE\nTOTALE 12,00\n",
     "PIZZERIA VESUVIO"),
])
def test_a_greeting_over_the_shops_name_is_neither_a_name_nor_a_buyers_heading(text, shop):
    assert read(text)["supplier_name"]["value"] == shop


@pytest.mark.parametrize("text, shop", [
    ("SCONTRINO FISCALE\nBar Sport\nVia Garibaldi 8\n10121 Torino\nTOTALE 3,00\n", "Bar Sport"),
    ("NIEFISKALNY\nKawiarnia Mocca\nul. Krótka 2\n31-001 Kraków\nSUMA PLN 12,00\n", "Kawiarnia Mocca"),
    ("BON FISCAL\nBrutăria Spicul\nStr. Morii 3\nCluj\nTOTAL 8,00\n", "Brutăria Spicul"),
    ("DOCUMENTO COMMERCIALE\nMacelleria Fini\nVia Emilia 40\n41121 Modena\nTOTALE COMPLESSIVO 21,30\n",
     "Macelleria Fini"),
    ("Factura simplificada\nPanadería Trigo\nCalle Real 4\n28001 Madrid\nTOTAL 2,10\n", "Panadería Trigo"),
])
def test_a_slips_title_above_the_shop_is_never_its_name(text, shop):
    assert read(text)["supplier_name"]["value"] == shop


def test_a_cafe_called_bar_is_a_name_and_a_cash_line_is_not():
    text = "Bar Centrale di Verdi Luca\nPiazza Duomo 2\n37121 Verona\nSCONTRINO N. 145\nTOTALE 1,20\nBAR 2,00\n"
    assert read(text)["supplier_name"]["value"] == "Bar Centrale di Verdi Luca"


@pytest.mark.parametrize("text, shop", [
    ("WELCOME TO SUNRISE MART\n12 Main Street\nSpringfield IL 62701\nTOTAL 4.00\nCASH 5.00\nCHANGE 1.00\n",
     "SUNRISE MART"),
    ("Willkommen bei Bäckerei Krume\nLindenweg 2\n10115 Berlin\nBon-Nr. 4711\nSUMME EUR 3,20\n", "Bäckerei Krume"),
    ("Benvenuti da Pasticceria Dolcezza\nVia Po 3\n10123 Torino\nSCONTRINO N. 18\nTOTALE 4,60\n",
     "Pasticceria Dolcezza"),
])
def test_a_greeting_naming_the_shop_on_its_line_gives_the_shops_name(text, shop):
    assert read(text)["supplier_name"]["value"] == shop


def test_a_greeting_naming_nobody_leaves_the_shops_name_under_it():
    text = "Welcome back!\nCorner Shop\n5 Mill Lane\nReceipt No: 18\nTOTAL 2.00\nCash 2.00\n"
    assert read(text)["supplier_name"]["value"] == "Corner Shop"
