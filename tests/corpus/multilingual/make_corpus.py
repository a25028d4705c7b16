"""Regenerate the multilingual test invoices and their truth.json (the generated files are committed).

The set is an exam for the field reader: seven languages, six layouts each, and the styles of
labels, separators, dates and amounts varied so that no single rule reads them all. Everything is
invented; identifiers are random bodies with check digits computed and verified by python-stdnum.

Run from the project folder (fpdf2, python-stdnum and pypdfium2 are in .venv):

    .venv/bin/python tests/corpus/multilingual/make_corpus.py

A fixed seed makes every run write the same files. After writing, each PDF's text layer is
extracted and every expected value must appear there in the form it was printed.
"""

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from fpdf import FPDF
from stdnum import iban as stdnum_iban
from stdnum import luhn
from stdnum.at import uid as at_uid
from stdnum.be import vat as be_vat
from stdnum.ch import uid as ch_uid
from stdnum.ch import vat as ch_vat
from stdnum.de import vat as de_vat
from stdnum.es import cif as es_cif
from stdnum.es import nif as es_nif
from stdnum.fr import tva as fr_tva
from stdnum.gb import vat as gb_vat
from stdnum.ie import vat as ie_vat
from stdnum.iso7064 import mod_11_10
from stdnum.it import iva as it_iva
from stdnum.nl import btw as nl_btw
from stdnum.pl import nip as pl_nip

HERE = Path(__file__).resolve().parent
FONTS = Path("/usr/share/fonts/truetype/dejavu")
SEED = 20261203
FIXED_CREATION = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
CENT = Decimal("0.01")

# ---------------------------------------------------------------------------------------------
# Valid identifiers: random body, check digits computed with stdnum, then stdnum's validate.
# ---------------------------------------------------------------------------------------------


def _digits(rng: random.Random, n: int, first_nonzero: bool = True) -> str:
    head = str(rng.randint(1, 9)) if first_nonzero else str(rng.randint(0, 9))
    return head + "".join(str(rng.randint(0, 9)) for _ in range(n - 1))


def make_vat(rng: random.Random, country: str) -> str:
    """A compact VAT id of the country whose check digits stdnum accepts."""
    for _ in range(10000):
        if country == "DE":
            body = _digits(rng, 8)
            number = "DE" + body + mod_11_10.calc_check_digit(body)
            module = de_vat
        elif country == "AT":
            body = "U" + _digits(rng, 7)
            number = "AT" + body + at_uid.calc_check_digit(body)
            module = None
        elif country == "CH":
            body = _digits(rng, 8)
            number = "CHE" + body + ch_uid.calc_check_digit(body) + "MWST"
            module = ch_vat
        elif country == "FR":
            body = _digits(rng, 8)
            siren = body + luhn.calc_check_digit(body)
            key = (12 + 3 * (int(siren) % 97)) % 97
            number = f"FR{key:02d}{siren}"
            module = fr_tva
        elif country == "BE":
            body = "0" + _digits(rng, 7)
            number = f"BE{body}{97 - int(body) % 97:02d}"
            module = be_vat
        elif country == "NL":
            number = "NL" + _digits(rng, 9) + "B01"
            module = nl_btw
        elif country == "ES":
            body = rng.choice("AB") + _digits(rng, 7)
            number = "ES" + body + es_cif.calc_check_digits(body)[0]
            module = es_nif
        elif country == "IT":
            body = _digits(rng, 7, first_nonzero=False) + f"{rng.randint(1, 100):03d}"
            number = "IT" + body + luhn.calc_check_digit(body)
            module = it_iva
        elif country == "PL":
            number = "PL" + _digits(rng, 10)
            module = pl_nip
        elif country == "GB":
            number = "GB" + _digits(rng, 9)
            module = gb_vat
        elif country == "IE":
            number = "IE" + _digits(rng, 7) + rng.choice("ABCDEFGHW")
            module = ie_vat
        else:
            raise ValueError(country)
        try:
            (module or at_uid).validate(number)
        except Exception:  # noqa: BLE001, S112 - an invalid random body is simply drawn again
            continue
        return number
    raise RuntimeError(f"no valid VAT id for {country}")


IBAN_BBAN = {  # country: (length of the BBAN, letters allowed in the bank code part)
    "DE": 18, "AT": 16, "CH": 17, "FR": 23, "BE": 12, "NL": 14, "ES": 20, "IT": 23,
    "PL": 24, "GB": 18, "IE": 18,
}


def make_iban(rng: random.Random, country: str) -> str:
    """A compact IBAN whose check digits (and national checks, where stdnum has them) are valid."""
    for _ in range(20000):
        if country in ("NL", "GB", "IE"):
            bank = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(4))
            bban = bank + _digits(rng, IBAN_BBAN[country] - 4, first_nonzero=False)
        elif country == "IT":
            bban = rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") + _digits(rng, 22, first_nonzero=False)
        else:
            bban = _digits(rng, IBAN_BBAN[country], first_nonzero=False)
        candidate = country + "00" + bban
        number = country + stdnum_iban.calc_check_digits(candidate) + bban
        if stdnum_iban.is_valid(number):
            return number
    raise RuntimeError(f"no valid IBAN for {country}")


def group4(value: str) -> str:
    return " ".join(value[i:i + 4] for i in range(0, len(value), 4))


def print_vat(compact: str, rng: random.Random, lang: str = "de") -> str:
    """The VAT id as suppliers print it: compact, or grouped the way the country usually does."""
    cc, body = compact[:2], compact[2:]
    style = rng.random()
    if cc == "CH":
        return ch_uid.format(compact[:12]) + {"fr": " TVA", "it": " IVA"}.get(lang, " MWST")
    if style < 0.45:
        return compact
    if cc == "DE":
        return f"DE {body[:3]} {body[3:6]} {body[6:]}"
    if cc == "FR":
        return f"FR {body[:2]} {body[2:5]} {body[5:8]} {body[8:]}"
    if cc == "BE":
        return f"BE {body[:4]}.{body[4:7]}.{body[7:]}"
    if cc == "NL":
        return f"NL{body[:4]}.{body[4:6]}.{body[6:9]}.{body[9:]}"
    if cc == "PL":
        return f"PL {body[:3]}-{body[3:6]}-{body[6:8]}-{body[8:]}"
    if cc == "GB":
        return f"GB {body[:3]} {body[3:7]} {body[7:]}"
    return f"{cc} {body}"


def compact_id(printed: str) -> str:
    return re.sub(r"[\s.\-]", "", printed).upper()


# ---------------------------------------------------------------------------------------------
# Amounts and dates as printed
# ---------------------------------------------------------------------------------------------


def fmt_amount(value: Decimal, style: str) -> str:
    whole, frac = f"{value.quantize(CENT):.2f}".split(".")
    groups = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    groups.insert(0, whole)
    sep, dec = {"dot_comma": (".", ","), "comma_dot": (",", "."), "space_comma": (" ", ","),
                "apos_dot": ("'", "."), "plain_comma": ("", ",")}[style]
    return sep.join(groups) + dec + frac


MONTHS = {
    "en": "January February March April May June July August September October November December",
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "nl": "januari februari maart april mei juni juli augustus september oktober november december",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "pl": "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia",
}


NL_SHORT = ["jan.", "feb.", "mrt.", "apr.", "mei", "jun.", "jul.", "aug.", "sep.", "okt.", "nov.", "dec."]


def fmt_date(d: date, style: str, lang: str) -> str:
    month = MONTHS[lang].split()[d.month - 1]
    if style == "dot":
        return f"{d.day:02d}.{d.month:02d}.{d.year}"
    if style == "slash":
        return f"{d.day:02d}/{d.month:02d}/{d.year}"
    if style == "dash":
        return f"{d.day:02d}-{d.month:02d}-{d.year}"
    if style == "iso":
        return d.isoformat()
    if style == "us":
        return f"{d.month:02d}/{d.day:02d}/{d.year}"
    if style == "name":
        return {
            "en": f"{month} {d.day}, {d.year}", "de": f"{d.day}. {month} {d.year}",
            "fr": f"{d.day} {month} {d.year}", "nl": f"{d.day} {month} {d.year}",
            "es": f"{d.day} de {month} de {d.year}", "it": f"{d.day} {month} {d.year}",
            "pl": f"{d.day} {month} {d.year}",
        }[lang]
    if style == "name2":
        return {
            "en": f"{d.day} {month[:3]} {d.year}", "de": f"{d.day:02d}. {month} {d.year}",
            "fr": f"{d.day:02d} {month.capitalize()} {d.year}", "nl": f"{d.day:02d} {NL_SHORT[d.month - 1]} {d.year}",
            "es": f"{d.day} {month} {d.year}", "it": f"{d.day:02d} {month.capitalize()} {d.year}",
            "pl": f"{d.day} {month} {d.year} r.",
        }[lang]
    raise ValueError(style)


# ---------------------------------------------------------------------------------------------
# Vocabulary: the labels each language prints, with the abbreviations found on real invoices
# ---------------------------------------------------------------------------------------------

VOCAB: dict[str, dict] = {
    "en": dict(
        title=["INVOICE", "Invoice", "Tax Invoice", "VAT INVOICE"],
        number=["Invoice number", "Invoice No.", "Inv. #", "Invoice #", "Invoice no"],
        date=["Invoice date", "Date", "Issue date", "Date of issue"],
        due=["Due date", "Payment due", "Due"], delivery=["Delivery date", "Date of supply"],
        customer_no=["Customer No.", "Account no.", "Customer ref."],
        order_no=["PO number", "Your order", "Order ref."],
        vat=["VAT No.", "VAT Reg. No.", "VAT ID", "VAT registration no."], your_vat="Your VAT No.",
        buyer=["Bill to", "Invoice to", "Customer", "Billed to"], seller=["From", "Supplier", "Seller"],
        ship_to="Deliver to", cols=("Description", "Qty", "Unit price", "VAT", "Amount"),
        net=["Subtotal", "Net amount", "Total excl. VAT", "Net total"], vat_amount=["VAT {rate}", "VAT @ {rate}"],
        total=["Total due", "Amount due", "TOTAL", "Balance due", "Invoice total"], gross="Total incl. VAT",
        net_short="Net", vat_short="VAT", carried="Carried forward", brought="Brought forward",
        page="Page {n} of {m}", pay="Please pay within 30 days by bank transfer to:",
        card="Paid by card (Visa ending {last4}). Nothing to pay.", cash="Paid in cash.",
        bank="Bank", bank_details="Bank details", currency="Currency", thanks="Thank you for your business.",
        sentence="Invoice {number} dated {date}", reverse="Reverse charge: VAT to be accounted for by the customer.",
        tel="Tel.",
    ),
    "de": dict(
        title=["RECHNUNG", "Rechnung"],
        number=["Rechnungsnummer", "Rechnungsnr.", "Rechnung Nr.", "Re.-Nr.", "Belegnummer"],
        date=["Rechnungsdatum", "Datum", "Ausstellungsdatum", "Rechnungsdat."],
        due=["Fällig am", "Zahlbar bis", "Fälligkeit"], delivery=["Lieferdatum", "Leistungsdatum"],
        customer_no=["Kundennummer", "Kunden-Nr.", "Kd.-Nr."], order_no=["Bestellnr.", "Ihre Bestellung", "Auftrag"],
        vat=["USt-IdNr.", "USt-ID", "Umsatzsteuer-ID", "UID-Nr."], your_vat="Ihre USt-IdNr.",
        buyer=["Rechnungsempfänger", "Kunde", "Rechnungsadresse"], seller=["Lieferant", "Verkäufer", "Absender"],
        ship_to="Lieferadresse", cols=("Bezeichnung", "Menge", "Einzelpreis", "MwSt.", "Gesamt"),
        net=["Nettobetrag", "Zwischensumme", "Summe netto", "Warenwert netto"],
        vat_amount=["MwSt. {rate}", "zzgl. {rate} USt.", "Umsatzsteuer {rate}"],
        total=["Gesamtbetrag", "Rechnungsbetrag", "Zu zahlen", "Endbetrag", "Gesamtsumme brutto"],
        gross="Brutto", net_short="Netto", vat_short="MwSt.", carried="Übertrag", brought="Übertrag",
        page="Seite {n} von {m}", pay="Bitte überweisen Sie den Betrag innerhalb von 14 Tagen auf folgendes Konto:",
        card="Bezahlt mit EC-Karte. Betrag dankend erhalten.", cash="Betrag bar erhalten.",
        bank="Bank", bank_details="Bankverbindung", currency="Währung", thanks="Vielen Dank für Ihren Auftrag!",
        sentence="Rechnung Nr. {number} vom {date}", reverse="Steuerschuldnerschaft des Leistungsempfängers.",
        tel="Tel.",
    ),
    "fr": dict(
        title=["FACTURE", "Facture"],
        number=["Numéro de facture", "Facture n°", "Fact. n°", "N° de facture", "Réf. facture"],
        date=["Date de facture", "Date", "Date d'émission", "Émise le"],
        due=["Échéance", "Date d'échéance", "À régler avant le"], delivery=["Date de livraison", "Date de prestation"],
        customer_no=["Réf. client", "Code client", "N° client"],
        order_no=["N° commande", "Votre commande", "Bon de commande"],
        vat=["N° TVA intracommunautaire", "TVA intracom.", "N° TVA", "Numéro de TVA"], your_vat="Votre n° TVA",
        buyer=["Client", "Facturé à", "Adresse de facturation", "Destinataire"],
        seller=["Fournisseur", "Vendeur", "Émetteur"],
        ship_to="Livré à", cols=("Désignation", "Qté", "Prix unitaire HT", "TVA", "Montant HT"),
        net=["Total HT", "Montant HT", "Sous-total HT"],
        vat_amount=["TVA {rate}", "TVA à {rate}", "Montant TVA {rate}"],
        total=["Total TTC", "Net à payer", "Montant TTC", "Total à payer"], gross="TTC",
        net_short="HT", vat_short="TVA", carried="À reporter", brought="Report",
        page="Page {n}/{m}", pay="Règlement par virement à 30 jours sur le compte suivant :",
        card="Réglé par carte bancaire. Merci de votre visite.", cash="Réglé en espèces.",
        bank="Banque", bank_details="Coordonnées bancaires", currency="Devise", thanks="Merci de votre confiance.",
        sentence="Facture n° {number} du {date}", reverse="Autoliquidation - article 283-2 du CGI.",
        tel="Tél.",
    ),
    "nl": dict(
        title=["FACTUUR", "Factuur"],
        number=["Factuurnummer", "Factuurnr.", "Factuur nr", "Nummer"],
        date=["Factuurdatum", "Datum", "Factuurdat."],
        due=["Vervaldatum", "Te betalen voor", "Uiterste betaaldatum"], delivery=["Leverdatum", "Leveringsdatum"],
        customer_no=["Klantnummer", "Klantnr.", "Debiteurnr."], order_no=["Ordernummer", "Uw referentie", "Bestelnr."],
        vat=["BTW-nummer", "Btw-nr.", "BTW-id", "Btw-identificatienummer"], your_vat="Uw btw-nr.",
        buyer=["Klant", "Factuuradres", "Aan", "Gefactureerd aan"], seller=["Leverancier", "Afzender", "Van"],
        ship_to="Afleveradres", cols=("Omschrijving", "Aantal", "Prijs", "Btw", "Bedrag"),
        net=["Subtotaal", "Totaal excl. btw", "Bedrag excl. btw"],
        vat_amount=["Btw {rate}", "BTW {rate}", "{rate} btw"],
        total=["Totaal", "Te betalen", "Totaal incl. btw", "Totaalbedrag"], gross="Incl. btw",
        net_short="Excl. btw", vat_short="Btw", carried="Transport", brought="Transport",
        page="Pagina {n} van {m}", pay="Gelieve het bedrag binnen 30 dagen over te maken op:",
        card="Voldaan per pin. Bedankt voor uw aankoop!", cash="Contant voldaan.",
        bank="Bank", bank_details="Betaalgegevens", currency="Valuta", thanks="Bedankt voor uw opdracht.",
        sentence="Factuur {number} d.d. {date}", reverse="Btw verlegd.", tel="Tel.",
    ),
    "es": dict(
        title=["FACTURA", "Factura"],
        number=["Número de factura", "Nº factura", "Factura n.º", "Núm. factura", "Nº"],
        date=["Fecha de factura", "Fecha", "Fecha de emisión", "Fecha factura"],
        due=["Vencimiento", "Fecha de vencimiento"], delivery=["Fecha de entrega", "Fecha de operación"],
        customer_no=["Nº cliente", "Código cliente", "Cód. cliente"], order_no=["Pedido", "Su pedido", "Ref. pedido"],
        vat=["NIF-IVA", "CIF", "NIF", "N.I.F."], your_vat="NIF cliente",
        buyer=["Cliente", "Facturar a", "Datos del cliente"], seller=["Proveedor", "Emisor", "Vendedor"],
        ship_to="Enviar a", cols=("Concepto", "Cant.", "Precio unit.", "IVA", "Importe"),
        net=["Base imponible", "Subtotal", "Total base"], vat_amount=["IVA {rate}", "Cuota IVA {rate}"],
        total=["Total factura", "Total a pagar", "TOTAL", "Importe total"], gross="Total",
        net_short="Base", vat_short="IVA", carried="Suma y sigue", brought="Suma anterior",
        page="Página {n} de {m}", pay="Forma de pago: transferencia bancaria a 30 días a la cuenta:",
        card="Pagado con tarjeta. Gracias por su visita.", cash="Pagado en efectivo.",
        bank="Banco", bank_details="Datos bancarios", currency="Moneda", thanks="Gracias por su confianza.",
        sentence="Factura n.º {number} de fecha {date}", reverse="Inversión del sujeto pasivo.", tel="Tel.",
    ),
    "it": dict(
        title=["FATTURA", "Fattura"],
        number=["Numero fattura", "Fattura n.", "N. fattura", "Nr. documento", "Fatt. n°"],
        date=["Data fattura", "Data", "Data documento", "Data emissione"],
        due=["Scadenza", "Data scadenza"], delivery=["Data consegna", "Data DDT"],
        customer_no=["Cod. cliente", "Codice cliente"], order_no=["Ordine n.", "Vs. ordine", "Rif. ordine"],
        vat=["Partita IVA", "P.IVA", "P. IVA", "Part. IVA"], your_vat="P.IVA cliente",
        buyer=["Cliente", "Spett.le", "Destinatario", "Intestatario"], seller=["Fornitore", "Cedente", "Mittente"],
        ship_to="Destinazione merce", cols=("Descrizione", "Q.tà", "Prezzo unit.", "IVA", "Importo"),
        net=["Imponibile", "Totale imponibile", "Totale merce"], vat_amount=["IVA {rate}", "Imposta {rate}"],
        total=["Totale fattura", "Totale documento", "Totale da pagare", "TOTALE"], gross="Totale",
        net_short="Imponibile", vat_short="IVA", carried="A riportare", brought="Riporto",
        page="Pagina {n} di {m}", pay="Pagamento: bonifico bancario a 30 gg d.f. sulle seguenti coordinate:",
        card="Pagato con carta di credito. Grazie!", cash="Pagato in contanti.",
        bank="Banca", bank_details="Coordinate bancarie", currency="Valuta", thanks="Grazie per la preferenza.",
        sentence="Fattura n. {number} del {date}", reverse="Inversione contabile (reverse charge).", tel="Tel.",
    ),
    "pl": dict(
        title=["FAKTURA VAT", "Faktura VAT", "Faktura"],
        number=["Numer faktury", "Nr faktury", "Faktura VAT nr", "Nr dokumentu"],
        date=["Data wystawienia", "Data faktury", "Wystawiono dnia"],
        due=["Termin płatności", "Zapłata do"], delivery=["Data sprzedaży", "Data dostawy"],
        customer_no=["Nr klienta", "Kod klienta"], order_no=["Zamówienie", "Nr zamówienia"],
        vat=["NIP", "NIP UE", "NIP/VAT UE"], your_vat="NIP nabywcy",
        buyer=["Nabywca", "Odbiorca faktury", "Nabywca / Płatnik"], seller=["Sprzedawca", "Wystawca", "Dostawca"],
        ship_to="Odbiorca", cols=("Nazwa towaru / usługi", "Ilość", "Cena netto", "VAT", "Wartość netto"),
        net=["Razem netto", "Wartość netto", "Suma netto"], vat_amount=["VAT {rate}", "Kwota VAT {rate}"],
        total=["Do zapłaty", "Razem brutto", "Wartość brutto", "RAZEM DO ZAPŁATY"], gross="Brutto",
        net_short="Netto", vat_short="VAT", carried="Do przeniesienia", brought="Z przeniesienia",
        page="Strona {n} z {m}", pay="Forma płatności: przelew 14 dni na rachunek:",
        card="Zapłacono kartą płatniczą.", cash="Zapłacono gotówką.",
        bank="Bank", bank_details="Dane do przelewu", currency="Waluta", thanks="Dziękujemy za zakupy.",
        sentence="Faktura VAT nr {number} z dnia {date}", reverse="Odwrotne obciążenie.", tel="Tel.",
    ),
}

ITEMS = {
    "en": ["Website maintenance (monthly)", "Printing of brochures A5, 4/4", "Consulting day", "Laser toner cartridge",
           "Hosting package Pro, 12 months", "Delivery and handling", "Workshop facilitation", "Steel brackets 40 mm",
           "Design revision round", "Training session (half day)"],
    "de": ["Wartung Heizungsanlage", "Montage Lüftungsgerät", "Kupferrohr 22 mm, Meterware", "Anfahrtspauschale",
           "Arbeitsstunde Geselle", "Druckminderer DN 20", "Softwarelizenz, 1 Jahr", "Palettenversand innerhalb DE",
           "Beratung nach Aufwand", "Dichtungsset Premium"],
    "fr": ["Prestation de conseil (jour)", "Impression catalogue 48 pages", "Frais de livraison", "Révision annuelle",
           "Pièces détachées – kit freins", "Main-d'œuvre (heure)", "Licence logicielle annuelle", "Maquette graphique",
           "Viennoiseries assorties (lot)", "Location de matériel"],
    "nl": ["Onderhoud cv-ketel", "Installatie warmtepomp", "Voorrijkosten", "Montage per uur", "Stadsfiets Deluxe",
           "Drukwerk flyers A5", "Licentie kantoorsoftware", "Verzendkosten", "Taarten assortiment", "Adviesgesprek"],
    "es": ["Transporte Valencia - Madrid", "Material de oficina", "Servicio de consultoría (hora)",
           "Azulejo cerámico 30x30", "Impresión de folletos", "Mantenimiento mensual", "Portes",
           "Alojamiento (noche)", "Licencia anual", "Instalación y puesta en marcha"],
    "it": ["Lavorazione CNC particolari", "Stampa biglietti da visita", "Manodopera (ora)", "Trasporto",
           "Consulenza fiscale", "Lamiera zincata 10/10", "Canone assistenza annuale", "Materiale di consumo",
           "Progettazione impianto", "Sopralluogo tecnico"],
    "pl": ["Usługa transportowa Poznań – Berlin", "Roboty murarskie", "Materiały budowlane", "Druk ulotek A5",
           "Licencja oprogramowania – 12 mies.", "Usługa serwisowa", "Sadzonki tui szmaragd", "Ziemia ogrodowa 50 l",
           "Wdrożenie systemu ERP (godz.)", "Rusztowanie – wynajem"],
}

VAT_RATES = {"GB": ("20", "0"), "IE": ("23", "13.5"), "US": ("0", "0"), "DE": ("19", "7"), "AT": ("20", "10"),
             "CH": ("8.1", "2.6"), "FR": ("20", "5.5"), "BE": ("21", "6"), "NL": ("21", "9"), "ES": ("21", "10"),
             "IT": ("22", "10"), "PL": ("23", "8")}


@dataclass
class Supplier:
    name: str
    country: str
    street: str
    city: str
    currency: str
    money: str          # amount style, see fmt_amount
    template: str       # how an amount with its currency is printed: "{a} €", "£{a}", "CHF {a}" ...
    date_style: str
    reg: str            # the legal line's registry words (decoy numbers included)
    flags: tuple[str, ...] = ()   # novat, card, cash, reverse
    bic: str = ""


@dataclass
class Buyer:
    name: str
    country: str
    street: str
    city: str


S = Supplier
SUPPLIERS: dict[str, list[Supplier]] = {
    "en": [
        S("Harbourside Print Works Ltd", "GB", "14 Quay Street", "Bristol BS1 4RD", "GBP", "comma_dot", "£{a}",
          "slash", "Registered in England and Wales No. 08812345"),
        S("Quillfeather Design", "GB", "3 Mill Lane", "Hebden Bridge HX7 8AB", "GBP", "comma_dot", "GBP {a}",
          "name2", "Sole trader: Ruth Quillfeather", ("novat",)),
        S("Liffey Cloud Services Ltd", "IE", "Unit 5, Grand Canal Quay", "Dublin 2, D02 X576", "EUR", "comma_dot",
          "€{a}", "name", "Registered in Ireland No. 612345"),
        S("Bluegate Software Inc.", "US", "220 Harbor Blvd, Suite 400", "Oakland, CA 94607", "USD", "comma_dot",
          "${a}", "us", "Delaware corporation, EIN 84-2034567", ("novat", "card")),
        S("Pennine Tooling Ltd", "GB", "Unit 9, Calder Trading Estate", "Huddersfield HD5 0RX", "GBP", "comma_dot",
          "{a} GBP", "iso", "Company No. 04456789, registered office as above"),
        S("Alpine Data Systems AG", "CH", "Bahnhofplatz 3", "3011 Bern, Switzerland", "CHF", "apos_dot", "CHF {a}",
          "dot", "Commercial register of the Canton of Bern CH-035.3.012.345-6"),
    ],
    "de": [
        S("Brandt Haustechnik GmbH", "DE", "Bahnhofstraße 21", "80335 München", "EUR", "dot_comma", "{a} €",
          "name", "Amtsgericht München HRB 214587 · Geschäftsführer: Jonas Brandt"),
        S("Rheinwerk Logistik GmbH & Co. KG", "DE", "Hafenweg 7", "50668 Köln", "EUR", "dot_comma", "{a} EUR",
          "dot", "Sitz Köln, AG Köln HRA 30412; pers. haft. Gesellschafterin: Rheinwerk Verwaltungs GmbH"),
        S("Sonnleitner Elektrotechnik GmbH", "AT", "Linzer Straße 45", "1140 Wien", "EUR", "dot_comma", "€ {a}",
          "name2", "FN 412345 k, Handelsgericht Wien"),
        S("Bergblick Treuhand AG", "CH", "Seestrasse 12", "8002 Zürich", "CHF", "apos_dot", "CHF {a}",
          "dot", "Handelsregister des Kantons Zürich"),
        S("Zimmerei Hofmann e.K.", "DE", "Dorfstraße 3", "97070 Würzburg", "EUR", "dot_comma", "{a} €",
          "iso", "Inhaber: Klaus Hofmann · AG Würzburg HRA 5521 · Steuernr. 257/123/45678"),
        S("Nordwind Medien UG (haftungsbeschränkt)", "DE", "Speicherstadt 9", "20457 Hamburg", "EUR", "dot_comma",
          "EUR {a}", "name", "AG Hamburg HRB 160321", ("card",)),
    ],
    "fr": [
        S("Atelier Durand SAS", "FR", "12 rue des Tanneurs", "69002 Lyon", "EUR", "space_comma", "{a} €",
          "slash", "SAS au capital de 10 000 € – RCS Lyon 852 147 963"),
        S("Éditions du Vieux Port SARL", "FR", "4 quai de Rive-Neuve", "13007 Marseille", "EUR", "space_comma",
          "{a} EUR", "name", "SARL au capital de 7 500 € – RCS Marseille 492 318 774 – APE 5811Z"),
        S("Lumière Conseil SRL", "BE", "Avenue Louise 220", "1050 Bruxelles", "EUR", "dot_comma", "{a} €",
          "dot", "RPM Bruxelles – SRL"),
        S("Horlogerie Vaudoise Sàrl", "CH", "Rue du Lac 8", "1003 Lausanne", "CHF", "apos_dot", "{a} CHF",
          "name2", "Registre du commerce du canton de Vaud"),
        S("Garage Petitjean EURL", "FR", "27 avenue Jean Jaurès", "44000 Nantes", "EUR", "space_comma", "EUR {a}",
          "iso", "EURL au capital de 5 000 € – RCS Nantes 801 555 230", ("card",)),
        S("Boulangerie Morel & Fils SA", "FR", "3 place du Théâtre", "59000 Lille", "EUR", "space_comma", "{a} €",
          "name", "SA au capital de 120 000 € – RCS Lille Métropole 331 908 114"),
    ],
    "nl": [
        S("Van der Berg Installatietechniek B.V.", "NL", "Kanaalweg 14", "3526 KL Utrecht", "EUR", "dot_comma",
          "€ {a}", "dash", "KvK 30187654 · Algemene voorwaarden gedeponeerd bij de KvK"),
        S("De Groene Fiets B.V.", "NL", "Oudegracht 88", "1011 AB Amsterdam", "EUR", "dot_comma", "€ {a}",
          "name", "KvK 71234598", ("card",)),
        S("Vlaamse Drukkerij NV", "BE", "Meir 45", "2000 Antwerpen", "EUR", "dot_comma", "{a} EUR",
          "slash", "RPR Antwerpen"),
        S("Kuipers ICT Diensten B.V.", "NL", "Stationsplein 2", "9726 AE Groningen", "EUR", "dot_comma", "EUR {a}",
          "name2", "KvK 02098765"),
        S("Bakkerij Jansen V.O.F.", "NL", "Markt 17", "5211 JX 's-Hertogenbosch", "EUR", "dot_comma", "{a} €",
          "iso", "KvK 17043321"),
        S("Hollands Glorie Evenementen B.V.", "NL", "Westerkade 31", "3016 CM Rotterdam", "EUR", "comma_dot",
          "€ {a}", "name", "KvK 24456710"),
    ],
    "es": [
        S("Suministros Levante S.L.", "ES", "Calle de Colón 15", "46004 Valencia", "EUR", "dot_comma", "{a} €",
          "slash", "Inscrita en el Registro Mercantil de Valencia, Tomo 8123, Folio 45, Hoja V-10234"),
        S("Gráficas Almendro S.A.", "ES", "Calle de Alcalá 210", "28028 Madrid", "EUR", "dot_comma", "{a} EUR",
          "name", "R. M. de Madrid, Tomo 31020, Sección 8, Hoja M-558123"),
        S("Transportes Ribera S.L.U.", "ES", "Polígono Plaza, Calle C 4", "50197 Zaragoza", "EUR", "dot_comma",
          "EUR {a}", "dash", "Sociedad unipersonal – R. M. de Zaragoza, Hoja Z-45120"),
        S("Consultoría Ortega y Asociados S.L.", "ES", "Avenida de la Constitución 7", "41001 Sevilla", "EUR",
          "dot_comma", "{a} €", "name2", "R. M. de Sevilla, Hoja SE-99871"),
        S("Cerámicas del Sur S.A.", "ES", "Camino de la Térmica 30", "29004 Málaga", "EUR", "space_comma", "{a} €",
          "iso", "R. M. de Málaga, Tomo 4512, Hoja MA-20881"),
        S("Hostal Bahía Azul S.L.", "ES", "Paseo Marítimo 12", "03001 Alicante", "EUR", "dot_comma", "{a} €",
          "name", "R. M. de Alicante, Hoja A-77120", ("card",)),
    ],
    "it": [
        S("Officine Moretti S.r.l.", "IT", "Via Roma 45", "20121 Milano (MI)", "EUR", "dot_comma", "€ {a}",
          "slash", "Cap. soc. € 50.000 i.v. – REA MI-1987654"),
        S("Tipografia Colombo S.n.c.", "IT", "Corso Francia 112", "10143 Torino (TO)", "EUR", "dot_comma",
          "{a} €", "name", "REA TO-1122334"),
        S("Rossi Impianti S.p.A.", "IT", "Via dell'Industria 8", "40138 Bologna (BO)", "EUR", "dot_comma",
          "EUR {a}", "dot", "Cap. soc. € 1.200.000 i.v. – REA BO-456789 – Registro Imprese di Bologna"),
        S("Ticino Servizi SA", "CH", "Via Nassa 5", "6900 Lugano", "CHF", "apos_dot", "CHF {a}",
          "name2", "Registro di commercio del Cantone Ticino"),
        S("Studio Bianchi S.r.l.s.", "IT", "Piazza della Signoria 2", "50122 Firenze (FI)", "EUR", "dot_comma",
          "{a} EUR", "iso", "Cap. soc. € 1.000 i.v. – REA FI-665544", ("card",)),
        S("Lattoneria Ferraro S.r.l.", "IT", "Via Toledo 256", "80134 Napoli (NA)", "EUR", "dot_comma", "€ {a}",
          "name", "Cap. soc. € 20.000 i.v. – REA NA-778899"),
    ],
    "pl": [
        S("Kowalczyk Budownictwo sp. z o.o.", "PL", "ul. Marszałkowska 84", "00-514 Warszawa", "PLN", "space_comma",
          "{a} zł", "dot", "Sąd Rejonowy dla m.st. Warszawy, KRS 0000412345, kapitał zakładowy 50 000 zł"),
        S("Drukarnia Wiśniewski sp. z o.o.", "PL", "ul. Piotrkowska 120", "90-006 Łódź", "PLN", "space_comma",
          "{a} PLN", "name", "KRS 0000287654, REGON 472345678"),
        S("Zielona Łąka S.A.", "PL", "ul. Floriańska 15", "31-019 Kraków", "PLN", "dot_comma", "{a} zł",
          "name2", "KRS 0000198765, kapitał zakładowy 1 000 000 zł (wpłacony w całości)"),
        S("Usługi Informatyczne Nowak sp.j.", "PL", "ul. Długa 44", "80-827 Gdańsk", "EUR", "space_comma",
          "{a} EUR", "iso", "KRS 0000556677", ("reverse",)),
        S("Żuraw Transport sp. z o.o.", "PL", "ul. Głogowska 210", "60-104 Poznań", "PLN", "plain_comma",
          "{a} zł", "dash", "KRS 0000334455, BDO 000123456"),
        S("Sklep Ogrodniczy Dąbrowski s.c.", "PL", "ul. Ogrodowa 5", "50-001 Wrocław", "PLN", "space_comma",
          "{a} zł", "name", "REGON 021345678", ("cash",)),
    ],
}

BUYERS: dict[str, list[Buyer]] = {
    "en": [Buyer("Thornbury Retail Group Ltd", "GB", "88 Castle Street", "Cardiff CF10 1BH"),
           Buyer("Shannon Foods Ltd", "IE", "Dock Road", "Limerick V94 K2X5"),
           Buyer("Crescent Bay Media Ltd", "GB", "21 Marine Parade", "Brighton BN2 1TL")],
    "de": [Buyer("Meyer Maschinenbau GmbH", "DE", "Industriestraße 40", "70565 Stuttgart"),
           Buyer("Hansa Büroservice GmbH", "DE", "Mönckebergstraße 5", "20095 Hamburg"),
           Buyer("Alpenland Handel GmbH", "AT", "Getreidegasse 10", "5020 Salzburg")],
    "fr": [Buyer("Maison Lefèvre SARL", "FR", "9 rue Victor Hugo", "33000 Bordeaux"),
           Buyer("Groupe Arvel SA", "FR", "45 boulevard Haussmann", "75009 Paris"),
           Buyer("Les Jardins de Namur SRL", "BE", "Rue de Fer 20", "5000 Namur")],
    "nl": [Buyer("Dijkstra Bouw B.V.", "NL", "Industrieweg 3", "8912 AV Leeuwarden"),
           Buyer("Polderland Zorg B.V.", "NL", "Zorgpad 1", "8232 JZ Lelystad"),
           Buyer("Brugse Bouwwerken BV", "BE", "Langestraat 71", "8000 Brugge")],
    "es": [Buyer("Distribuciones Navarro S.L.", "ES", "Calle Mayor 33", "31001 Pamplona"),
           Buyer("Hoteles Mediterráneo S.A.", "ES", "Avenida Diagonal 401", "08008 Barcelona"),
           Buyer("Almacenes Castro S.L.", "ES", "Rúa do Vilar 19", "15705 Santiago de Compostela")],
    "it": [Buyer("Alimentari Greco S.r.l.", "IT", "Via Etnea 300", "95124 Catania (CT)"),
           Buyer("Cantieri Bruno S.p.A.", "IT", "Via del Porto 4", "16128 Genova (GE)"),
           Buyer("Farmacia Conti S.n.c.", "IT", "Corso Vittorio Emanuele 77", "70122 Bari (BA)")],
    "pl": [Buyer("Hurtownia Malinowski sp. z o.o.", "PL", "ul. Kościuszki 12", "40-049 Katowice"),
           Buyer("Szkoła Językowa Lingwa s.c.", "PL", "ul. Grunwaldzka 7", "85-236 Bydgoszcz"),
           Buyer("Meyer Maschinenbau GmbH", "DE", "Industriestraße 40", "70565 Stuttgart")],
}

BANKS = {"en": "Albion Commercial Bank plc", "de": "Volksbank Eichenau eG", "fr": "Crédit Méridional SA",
         "nl": "Polderbank N.V.", "es": "Banco de la Meseta S.A.", "it": "Banca Lagunare S.p.A.",
         "pl": "Bank Wiślany S.A."}

LAYOUTS = ["blocks", "grid", "letter", "twopage", "receipt", "panel"]


# ---------------------------------------------------------------------------------------------
# One invoice's data
# ---------------------------------------------------------------------------------------------


@dataclass
class Item:
    text: str
    qty: int
    unit: Decimal
    rate: str

    @property
    def net(self) -> Decimal:
        return (self.unit * self.qty).quantize(CENT)


@dataclass
class Invoice:
    lang: str
    layout: str
    sup: Supplier
    buyer: Buyer
    number: str
    issued: date
    due: date
    delivered: date
    items: list[Item]
    vat_id: str | None          # compact
    vat_printed: str | None
    iban: str | None            # compact
    iban_printed: str | None
    buyer_vat_printed: str | None
    customer_no: str
    order_no: str
    font: str
    upper: bool
    labels: dict[str, str] = field(default_factory=dict)
    printed: dict[str, str] = field(default_factory=dict)   # the expected values as they were drawn

    @property
    def v(self) -> dict:
        return VOCAB[self.lang]

    def money(self, value: Decimal, symbol: bool = True) -> str:
        text = fmt_amount(value, self.sup.money)
        return self.sup.template.format(a=text) if symbol else text

    def rate_text(self, rate: str) -> str:
        shown = rate if self.sup.money in ("comma_dot", "apos_dot") else rate.replace(".", ",")
        return f"{shown} %" if self.lang in ("de", "fr") else f"{shown}%"

    def breakdown(self) -> list[tuple[str, Decimal, Decimal]]:
        """(rate, net, vat) per VAT rate, in the order the rates first appear."""
        rates: dict[str, Decimal] = {}
        for item in self.items:
            rates[item.rate] = rates.get(item.rate, Decimal(0)) + item.net
        return [(r, n, (n * Decimal(r) / 100).quantize(CENT, ROUND_HALF_UP)) for r, n in rates.items()]

    @property
    def net(self) -> Decimal:
        return sum((i.net for i in self.items), Decimal(0))

    @property
    def total(self) -> Decimal:
        return self.net + sum((v for _, _, v in self.breakdown()), Decimal(0))

    def shown(self, d: date) -> str:
        return fmt_date(d, self.sup.date_style, self.lang)

    def label(self, key: str) -> str:
        text = self.labels[key]
        return text.upper() if self.upper else text

    def truth(self) -> dict:
        return {
            "supplier_name": self.printed.get("supplier_name", self.sup.name),
            "vat_id": self.vat_id,
            "invoice_number": self.number,
            "invoice_date": self.issued.isoformat(),
            "currency": self.sup.currency,
            "total_amount": f"{self.total:.2f}",
            "iban": self.iban,
        }


def invoice_number(rng: random.Random, lang: str, year: int) -> str:
    n = rng.randint(12, 98765)
    yy = year % 100
    patterns = {
        "en": [f"INV-{n:06d}", f"{year}-{n % 10000:04d}", f"HPW{n:05d}", f"A{yy}/{n % 1000:03d}"],
        "de": [f"RE-{year}-{n % 100000:05d}", f"{yy}{n:06d}", f"R{year}/{n % 1000:04d}", f"{n % 10000}-{yy}"],
        "fr": [f"F{year}-{n % 10000:04d}", f"FA{yy}{n:05d}", f"{year}/{n % 1000:03d}", f"FAC-{n:06d}"],
        "nl": [f"{year}{n % 10000:04d}", f"F{yy}-{n % 1000:03d}", f"INV{n:06d}", f"{n:08d}"],
        "es": [f"{year}/{n % 10000:04d}", f"A-{n % 1000:04d}", f"FV{yy}-{n:05d}", f"F{year}{n % 1000:03d}"],
        "it": [f"{n % 1000}/{year}", f"{year}/FE/{n % 10000:04d}", f"FT{yy}-{n % 1000:03d}", f"{n % 100:02d}/{yy}"],
        "pl": [f"FV/{n % 1000}/{rng.randint(1, 12):02d}/{year}", f"{n % 1000}/{year}",
               f"FS {n % 1000}/{year}", f"F/{year}/{n % 10000:05d}"],
    }
    return rng.choice(patterns[lang])


def build_invoice(rng: random.Random, lang: str, sup: Supplier, layout: str, font: str) -> Invoice:
    v = VOCAB[lang]
    start, end = date(2024, 1, 8), date(2026, 10, 28)
    issued = start + timedelta(days=rng.randint(0, (end - start).days))
    if sup.date_style == "us":
        while issued.day <= 12:    # month/day order is unambiguous only when the day exceeds 12
            issued += timedelta(days=1)
    buyer = rng.choice(BUYERS[lang])
    if "reverse" in sup.flags:
        buyer = Buyer("Meyer Maschinenbau GmbH", "DE", "Industriestraße 40", "70565 Stuttgart")
    std, reduced = VAT_RATES[sup.country]
    count = rng.randint(34, 40) if layout == "twopage" else rng.randint(2, 7)
    pool = ITEMS[lang]
    scale = rng.choice([1, 4, 15]) if layout != "twopage" else 1
    items = []
    for k in range(count):
        rate = std
        if layout == "panel" and k % 3 == 2:
            rate = reduced
        if "reverse" in sup.flags:
            rate = "0"
        unit = (Decimal(rng.randint(350, 25000)) / 100 * scale).quantize(CENT)
        items.append(Item(pool[(k * 3 + rng.randint(0, 9)) % len(pool)], rng.randint(1, 12), unit, rate))
    vat = None if "novat" in sup.flags else make_vat(rng, sup.country)
    vat_printed = print_vat(vat, rng, lang) if vat else None
    vat = compact_id(vat_printed) if vat_printed else None   # a Swiss id keeps the suffix of its language
    pays_by_transfer = not ({"card", "cash"} & set(sup.flags))
    account = make_iban(rng, sup.country if sup.country != "US" else "GB") if pays_by_transfer else None
    buyer_vat = None if buyer.country == "US" else make_vat(rng, buyer.country)
    inv = Invoice(
        lang=lang, layout=layout, sup=sup, buyer=buyer, number=invoice_number(rng, lang, issued.year),
        issued=issued, due=issued + timedelta(days=rng.choice([14, 30, 60])),
        delivered=issued - timedelta(days=rng.randint(1, 9)), items=items,
        vat_id=vat, vat_printed=vat_printed,
        iban=account, iban_printed=(group4(account) if rng.random() < 0.7 else account) if account else None,
        buyer_vat_printed=print_vat(buyer_vat, rng) if buyer_vat else None,
        customer_no=f"{rng.choice(['K', 'C', '', 'D'])}{rng.randint(10000, 99999)}",
        order_no=f"{rng.choice(['PO-', 'B', '', '4500'])}{rng.randint(1000, 999999)}",
        font=font, upper=rng.random() < 0.3,
    )
    sup.bic = sup.bic or bic_for(rng, sup.country)
    for key in ("title", "number", "date", "due", "delivery", "customer_no", "order_no", "vat", "buyer", "seller",
                "net", "vat_amount", "total"):
        inv.labels[key] = rng.choice(v[key])
    return inv


def bic_for(rng: random.Random, country: str) -> str:
    letters = "ABCDEFGHIJKLMNOPRSTUVWZ"
    bank = "".join(rng.choice(letters) for _ in range(4))
    location = rng.choice(["2X", "MM", "PP", "22"])
    return bank + (country if country != "US" else "GB") + location + rng.choice(["", "XXX"])


# ---------------------------------------------------------------------------------------------
# Drawing
# ---------------------------------------------------------------------------------------------

FAMILIES = {
    "Sans": ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf"),
    "Serif": ("DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf", "DejaVuSerif-Italic.ttf"),
    "Cond": ("DejaVuSansCondensed.ttf", "DejaVuSansCondensed-Bold.ttf", "DejaVuSansCondensed-Oblique.ttf"),
    "Mono": ("DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf", "DejaVuSansMono-Oblique.ttf"),
}


class Page(FPDF):
    """An A4 page drawn by absolute positions (mm, y = baseline)."""

    def __init__(self, family: str) -> None:
        super().__init__(format="A4", unit="mm")
        self.set_auto_page_break(False)
        self.set_creation_date(FIXED_CREATION)
        self.set_producer("make_corpus.py")
        for name in dict.fromkeys([family, "Mono"]):   # an ordered set: the same file on every run
            regular, bold, italic = FAMILIES[name]
            self.add_font(name, "", str(FONTS / regular))
            self.add_font(name, "B", str(FONTS / bold))
            self.add_font(name, "I", str(FONTS / italic))
        self.family = family
        self.add_page()

    def put(self, x: float, y: float, text: str, size: float = 9, style: str = "", align: str = "L",
            family: str | None = None, grey: int = 0, fit: float | None = None) -> None:
        self.set_font(family or self.family, style, size)
        while fit and self.get_string_width(text) > fit and size > 5:   # shrink a long text to its room
            size -= 0.25
            self.set_font(family or self.family, style, size)
        self.set_text_color(grey)
        width = self.get_string_width(text)
        if align == "R":
            x -= width
        elif align == "C":
            x -= width / 2
        self.text(x, y, text)
        self.set_text_color(0)

    def rule(self, x0: float, y: float, x1: float, width: float = 0.2) -> None:
        self.set_line_width(width)
        self.line(x0, y, x1, y)


def legal_lines(inv: Invoice, *, with_vat: bool = True, with_bank: bool = True) -> list[str]:
    s = inv.sup
    lines = [f"{s.name} · {s.street} · {s.city}", s.reg]
    parts = []
    if with_vat and inv.vat_printed:
        parts.append(f"{inv.labels['vat']} {inv.vat_printed}")
    if with_bank and inv.iban_printed:
        parts += [f"IBAN {inv.iban_printed}", f"BIC {s.bic}"]
    if parts:
        lines.append(" · ".join(parts))
    return lines


def record(inv: Invoice, key: str, text: str | None) -> None:
    if text is not None:
        inv.printed.setdefault(key, text)


def record_common(inv: Invoice, currency_token: str | None = None) -> None:
    """The printed forms that every layout shows the same way."""
    record(inv, "supplier_name", inv.sup.name)
    record(inv, "invoice_number", inv.number)
    record(inv, "invoice_date", inv.shown(inv.issued))
    record(inv, "total_amount", inv.money(inv.total, symbol=False))
    record(inv, "vat_id", inv.vat_printed)
    record(inv, "iban", inv.iban_printed)
    token = currency_token or inv.sup.template.replace("{a}", "").strip()
    record(inv, "currency", token)


def items_table(pdf: Page, inv: Invoice, items: list[Item], x: float, y: float, width: float, *,
                vat_col: bool, grid: bool, size: float = 8.5, row: float = 5.5, head_fill: bool = False) -> float:
    """Line items with qty, unit price and net amount columns; returns the y below the table."""
    cols = inv.v["cols"]
    w_unit, w_vat, w_amt = 30, 14 if vat_col else 0, 30
    x_desc = x + 2
    x_qty = x + width - w_amt - w_vat - w_unit - 2
    x_unit = x + width - w_amt - w_vat - 2
    x_vat = x + width - w_amt - 2
    x_amt = x + width - 2
    if head_fill:
        pdf.set_fill_color(225, 230, 238)
        pdf.rect(x, y - 4.2, width, row, style="F")
    pdf.put(x_desc, y, cols[0], size, "B", fit=x_qty - 14 - x_desc)
    pdf.put(x_qty, y, cols[1], size, "B", "R", fit=11)
    pdf.put(x_unit, y, cols[2], size, "B", "R", fit=w_unit - 3)
    if vat_col:
        pdf.put(x_vat, y, cols[3], size, "B", "R", fit=w_vat - 2)
    pdf.put(x_amt, y, cols[4], size, "B", "R", fit=w_amt - 3)
    pdf.rule(x, y + 1.6, x + width, 0.3)
    y += row + 0.6
    for item in items:
        pdf.put(x_desc, y, item.text, size, fit=x_qty - 12 - x_desc)
        pdf.put(x_qty, y, str(item.qty), size, align="R")
        pdf.put(x_unit, y, inv.money(item.unit, symbol=False), size, align="R")
        if vat_col:
            pdf.put(x_vat, y, inv.rate_text(item.rate), size, align="R")
        pdf.put(x_amt, y, inv.money(item.net, symbol=False), size, align="R")
        if grid:
            pdf.rule(x, y + 1.6, x + width, 0.1)
        y += row
    pdf.rule(x, y - row + 1.6, x + width, 0.3)
    return y + 2


def totals_rows(inv: Invoice, symbol: bool = True) -> list[tuple[str, str, bool]]:
    rows = [(inv.label("net"), inv.money(inv.net, symbol), False)]
    for rate, _net, vat in inv.breakdown():
        rows.append((inv.labels["vat_amount"].format(rate=inv.rate_text(rate)), inv.money(vat, symbol), False))
    rows.append((inv.label("total"), inv.money(inv.total, symbol), True))
    return rows


def payment_note(inv: Invoice) -> str | None:
    if "card" in inv.sup.flags:
        return inv.v["card"].format(last4="4417")
    if "cash" in inv.sup.flags:
        return inv.v["cash"]
    return None


# --- layout 1: classic header blocks; meta as a label column beside a value column; legal footer ---

def layout_blocks(pdf: Page, inv: Invoice, rng: random.Random) -> None:
    s, v = inv.sup, inv.v
    pdf.put(15, 22, s.name, 15, "B")
    for k, line in enumerate([s.street, s.city, f"{v['tel']} +{rng.randint(30, 49)} {rng.randint(100, 999)} "
                              f"{rng.randint(100000, 999999)}"]):
        pdf.put(15, 28 + 4.5 * k, line, 8.5, grey=70)
    pdf.put(195, 24, inv.label("title"), 22, "B", "R")
    meta = [(inv.label("number"), inv.number), (inv.label("date"), inv.shown(inv.issued)),
            (inv.label("due"), inv.shown(inv.due)), (inv.label("customer_no"), inv.customer_no)]
    y = 50
    for lab, val in meta:
        pdf.put(118, y, lab, 9, "B" if inv.upper else "")
        pdf.put(195, y, val, 9, align="R")
        y += 5.5
    pdf.put(15, 52, inv.label("buyer"), 8, "B", grey=90)
    lines = [inv.buyer.name, inv.buyer.street, inv.buyer.city]
    if inv.buyer_vat_printed:
        lines.append(f"{inv.labels['vat']}: {inv.buyer_vat_printed}")
    for k, line in enumerate(lines):
        pdf.put(15, 58 + 5 * k, line, 9.5, "B" if k == 0 else "")
    y = items_table(pdf, inv, inv.items, 15, 92, 180, vat_col=False, grid=True, head_fill=True)
    for lab, amount, is_total in totals_rows(inv):
        if is_total:
            pdf.rule(120, y - 3.8, 195, 0.4)
        pdf.put(122, y, lab, 10 if is_total else 9, "B" if is_total else "")
        pdf.put(193, y, amount, 10 if is_total else 9, "B" if is_total else "", "R")
        y += 6
    note = payment_note(inv) or (v["pay"] if inv.iban_printed else v["thanks"])
    pdf.put(15, y + 8, note, 8.5)
    if inv.iban_printed:
        pdf.put(15, y + 13, f"IBAN {inv.iban_printed} · BIC {s.bic}", 8.5)
    pdf.rule(15, 268, 195, 0.2)
    for k, line in enumerate(legal_lines(inv)):
        pdf.put(105, 273 + 4 * k, line, 7, align="C", grey=80)
    record_common(inv)


# --- layout 2: supplier top right, window address, a grid of labels with the values beneath ---

def layout_grid(pdf: Page, inv: Invoice, rng: random.Random) -> None:
    s, v = inv.sup, inv.v
    pdf.put(195, 20, s.name, 12, "B", "R")
    right = [s.street, s.city]
    if inv.vat_printed:
        right.append(f"{inv.labels['vat']} {inv.vat_printed}")
    right.append(f"{v['tel']} +{rng.randint(30, 49)} {rng.randint(10, 99)} {rng.randint(1000000, 9999999)}")
    for k, line in enumerate(right):
        pdf.put(195, 26 + 4.2 * k, line, 8, align="R")
    pdf.put(20, 47, f"{s.name} · {s.street} · {s.city}", 6, grey=110)
    pdf.rule(20, 48.5, 100, 0.1)
    lines = [inv.buyer.name, inv.buyer.street, inv.buyer.city]
    for k, line in enumerate(lines):
        pdf.put(20, 55 + 5 * k, line, 10)
    if inv.buyer_vat_printed:
        pdf.put(20, 55 + 5 * len(lines) + 2, f"{v['your_vat']}: {inv.buyer_vat_printed}", 8.5)
    pdf.put(20, 95, inv.label("title"), 16, "B")
    heads = [inv.label("number"), inv.label("date"), inv.label("customer_no"), inv.label("order_no"),
             v["currency"].upper() if inv.upper else v["currency"]]
    values = [inv.number, inv.shown(inv.issued), inv.customer_no, inv.order_no, s.currency]
    x = 20.0
    for head, value in zip(heads, values, strict=True):
        pdf.put(x, 104, head, 7, grey=100)
        pdf.put(x, 109.5, value, 9.5, "B")
        pdf.set_font(pdf.family, "B", 9.5)
        width = pdf.get_string_width(value)
        pdf.set_font(pdf.family, "", 7)
        x += max(26.0, width + 8, pdf.get_string_width(head) + 6)
    pdf.rule(20, 112.5, 195, 0.2)
    y = items_table(pdf, inv, inv.items, 20, 122, 175, vat_col=False, grid=False, size=9, row=6)
    for lab, amount, is_total in totals_rows(inv, symbol=False):
        pdf.put(130, y, lab, 9.5, "B" if is_total else "")
        pdf.put(193, y, amount, 9.5, "B" if is_total else "", "R")
        if is_total:
            pdf.rule(128, y + 1.8, 195, 0.5)
        y += 6
    y += 10
    note = payment_note(inv)
    if note:
        pdf.put(20, y, note, 9)
    else:
        pdf.put(20, y, v["bank_details"], 9, "B")
        for k, (lab, val) in enumerate([(v["bank"], BANKS[inv.lang]), ("IBAN", inv.iban_printed),
                                        ("BIC", s.bic)]):
            pdf.put(20, y + 5.5 * (k + 1), lab, 9)
            pdf.put(48, y + 5.5 * (k + 1), str(val), 9)
    pdf.put(20, 280, s.reg, 6.5, grey=110)
    record_common(inv, currency_token=s.currency)


# --- layout 3: a letter; every label and value on one line with varying separators ---

SEPARATORS = {"en": [": ", " ", "\t", ":\t"], "de": [": ", " ", ":\t", "\t"], "fr": [" : ", " ", ":\t", "\t"],
              "nl": [": ", " ", ":\t", "\t"], "es": [": ", " ", ":\t", "\t"], "it": [": ", " ", "\t", ":\t"],
              "pl": [": ", " ", ":\t", "\t"]}


def inline(pdf: Page, inv: Invoice, x: float, y: float, label: str, value: str, sep: str, size: float = 9.5,
           bold_label: bool = False, fit: float | None = None) -> None:
    """Label and value on one line; a tab separator is drawn as a wide gap."""
    style = "B" if bold_label else ""
    if sep.endswith("\t"):
        pdf.put(x, y, label + sep[:-1], size, style)
        pdf.put(x + 45, y, value, size)
    else:
        pdf.put(x, y, label + sep + value, size, style, fit=fit)


def layout_letter(pdf: Page, inv: Invoice, rng: random.Random) -> None:
    s, v = inv.sup, inv.v
    pdf.put(105, 22, s.name, 17, "B", "C")
    pdf.put(105, 28, f"{s.street}, {s.city}", 8.5, align="C")
    contact = f"{v['tel']} +{rng.randint(30, 49)} {rng.randint(100, 999)} {rng.randint(100000, 999999)}"
    if inv.vat_printed:
        contact += f"   |   {inv.labels['vat']}: {inv.vat_printed}"
    pdf.put(105, 32.5, contact, 8.5, align="C")
    pdf.rule(15, 36, 195, 0.6)
    seps = SEPARATORS[inv.lang]
    buyer_label = inv.label("buyer")
    inline(pdf, inv, 118, 50, buyer_label, inv.buyer.name, ": ", 9.5, bold_label=True, fit=77)
    lines = [inv.buyer.street, inv.buyer.city]
    if inv.buyer_vat_printed:
        lines.append(f"{inv.labels['vat']} {inv.buyer_vat_printed}")
    for k, line in enumerate(lines):
        pdf.put(118, 55 + 4.8 * k, line, 9)
    pdf.put(15, 50, inv.label("title"), 13, "B")
    rows = [(inv.label("number"), inv.number), (inv.label("date"), inv.shown(inv.issued)),
            (inv.label("delivery"), inv.shown(inv.delivered)), (inv.label("order_no"), inv.order_no)]
    for k, (lab, val) in enumerate(rows):
        sep = seps[(k + len(inv.number)) % len(seps)]
        inline(pdf, inv, 15, 58 + 6 * k, lab, val, sep)
    y = 92
    for item in inv.items:
        pdf.put(15, y, f"{item.qty} x {item.text}", 9.5)
        pdf.put(150, y, f"@ {inv.money(item.unit, symbol=False)}", 9, align="R", grey=90)
        pdf.put(195, y, inv.money(item.net), 9.5, align="R")
        y += 6
    pdf.rule(110, y - 3, 195, 0.2)
    y += 4
    for lab, amount, is_total in totals_rows(inv):
        if is_total:
            y += 2
            pdf.put(15, y, f"{lab}: {amount}", 13, "B")
        else:
            pdf.put(110, y, lab, 9.5)
            pdf.put(195, y, amount, 9.5, align="R")
        y += 6
    y += 8
    note = payment_note(inv)
    if note:
        pdf.put(15, y, note, 9.5)
    else:
        sentence = {"en": "Please transfer the amount to IBAN {i} (BIC {b}), quoting the invoice number.",
                    "de": "Bitte überweisen Sie den Betrag auf IBAN {i} (BIC {b}) unter Angabe der Rechnungsnummer.",
                    "fr": "Merci de régler par virement sur l'IBAN {i} (BIC {b}) en rappelant le numéro de facture.",
                    "nl": "Graag overmaken naar IBAN {i} (BIC {b}) o.v.v. het factuurnummer.",
                    "es": "Rogamos transferencia a la cuenta IBAN {i} (BIC {b}) indicando el número de factura.",
                    "it": "Si prega di effettuare il bonifico su IBAN {i} (BIC {b}) indicando il numero di fattura.",
                    "pl": "Prosimy o przelew na rachunek IBAN {i} (BIC {b}) z numerem faktury w tytule."}[inv.lang]
        pdf.put(15, y, sentence.format(i=inv.iban_printed, b=s.bic), 9, fit=180)
    pdf.put(15, y + 10, v["thanks"], 9, "I")
    pdf.put(105, 285, s.reg, 6.5, align="C", grey=100)
    record_common(inv)


# --- layout 4: two pages; carried-forward subtotal; totals and the bank account on page 2 ---

def layout_twopage(pdf: Page, inv: Invoice, rng: random.Random) -> None:
    s, v = inv.sup, inv.v

    def footer(n: int) -> None:
        pdf.rule(15, 272, 195, 0.2)
        for k, line in enumerate(legal_lines(inv, with_bank=False)):
            pdf.put(15, 276 + 3.6 * k, line, 6.5, grey=90)
        pdf.put(195, 276, v["page"].format(n=n, m=2), 7, align="R")

    twopage_letterhead(pdf, inv)
    meta = [(inv.label("number"), inv.number), (inv.label("date"), inv.shown(inv.issued)),
            (inv.label("delivery"), inv.shown(inv.delivered)), (inv.label("customer_no"), inv.customer_no),
            (inv.label("due"), inv.shown(inv.due))]
    for k, (lab, val) in enumerate(meta):
        pdf.put(125, 36 + 5 * k, lab, 8.5, grey=80, fit=38)
        pdf.put(165, 36 + 5 * k, val, 8.5, "B")
    pdf.put(15, 38, inv.label("buyer"), 8, "B")
    lines = [inv.buyer.name, inv.buyer.street, inv.buyer.city]
    if inv.buyer_vat_printed:
        lines.append(f"{inv.labels['vat']} {inv.buyer_vat_printed}")
    for k, line in enumerate(lines):
        pdf.put(15, 43 + 4.6 * k, line, 9, fit=58)
    pdf.put(76, 38, v["ship_to"], 8, "B")
    for k, line in enumerate([inv.buyer.name, f"{v['ship_to']} / Dock {rng.randint(1, 9)}", inv.buyer.street,
                              inv.buyer.city]):
        pdf.put(76, 43 + 4.6 * k, line, 9, fit=46)
    first = inv.items[:26]
    rest = inv.items[26:]
    y = items_table(pdf, inv, first, 15, 75, 180, vat_col=True, grid=False, size=8, row=6.5)
    carried = sum((i.net for i in first), Decimal(0))
    pdf.put(150, y + 1, v["carried"], 8.5, "I")
    pdf.put(193, y + 1, inv.money(carried, symbol=False), 8.5, "I", "R")
    footer(1)
    pdf.add_page()
    pdf.put(15, 18, f"{s.name} – {inv.label('number')} {inv.number}", 9, "B")
    pdf.put(150, 28, v["brought"], 8.5, "I")
    pdf.put(193, 28, inv.money(carried, symbol=False), 8.5, "I", "R")
    y = items_table(pdf, inv, rest, 15, 38, 180, vat_col=True, grid=False, size=8, row=6.5)
    y += 4
    for lab, amount, is_total in totals_rows(inv):
        pdf.put(125, y, lab, 10.5 if is_total else 9, "B" if is_total else "")
        pdf.put(193, y, amount, 10.5 if is_total else 9, "B" if is_total else "", "R")
        y += 6.5
    y += 8
    note = payment_note(inv)
    if note:
        pdf.put(15, y, note, 9)
    else:
        pdf.put(15, y, v["pay"], 9)
        pdf.put(15, y + 7, "IBAN", 8, "B")
        pdf.put(15, y + 11.5, inv.iban_printed or "", 10)
        pdf.put(90, y + 7, "BIC / SWIFT", 8, "B")
        pdf.put(90, y + 11.5, s.bic, 10)
    footer(2)
    record_common(inv)


def twopage_letterhead(pdf: Page, inv: Invoice) -> None:
    """A square logo of the supplier's initials, its name and address beside it, the title right."""
    s = inv.sup
    initials = "".join(w[0] for w in s.name.split()[:2]).upper()
    pdf.set_fill_color(40, 70, 120)
    pdf.rect(15, 12, 16, 16, style="F")
    pdf.set_text_color(255)
    pdf.set_font(pdf.family, "B", 12)
    pdf.text(17.5, 22.5, initials)
    pdf.set_text_color(0)
    pdf.put(35, 18, s.name, 13, "B")
    pdf.put(35, 23.5, f"{s.street} · {s.city}", 8.5)
    pdf.put(195, 18, inv.label("title"), 18, "B", "R")


# --- layout 5: a narrow receipt-style invoice, monospaced, uppercase labels with dot leaders ---

def layout_receipt(pdf: Page, inv: Invoice, rng: random.Random) -> None:
    s = inv.sup
    x0, x1, size = 55.0, 155.0, 9
    width = 52  # characters per line at this size

    def lead(label: str, value: str) -> str:
        dots = max(2, width - len(label) - len(value) - 2)
        return f"{label} {'.' * dots} {value}"

    y = 20.0
    shown_name = s.name.upper() if rng.random() < 0.5 else s.name
    record(inv, "supplier_name", shown_name)
    for line in [shown_name, s.street, s.city]:
        pdf.put(105, y, line, 10.5 if y == 20 else size, "B" if y == 20 else "", "C", family="Mono")
        y += 5
    if inv.vat_printed:
        pdf.put(105, y, f"{inv.labels['vat'].upper()} {inv.vat_printed}", size, align="C", family="Mono")
        y += 5
    pdf.put(x0, y, "=" * width, size, family="Mono")
    y += 6
    pdf.put(105, y, inv.labels["title"].upper(), 12, "B", "C", family="Mono")
    y += 7
    for lab, val in [(inv.labels["number"].upper(), inv.number), (inv.labels["date"].upper(), inv.shown(inv.issued)),
                     (inv.labels["customer_no"].upper(), inv.customer_no)]:
        pdf.put(x0, y, lead(lab, val), size, family="Mono")
        y += 5
    y += 2
    pdf.put(x0, y, inv.labels["buyer"].upper() + ":", size, "B", family="Mono")
    y += 5
    lines = [inv.buyer.name, f"{inv.buyer.street}, {inv.buyer.city}"]
    if inv.buyer_vat_printed:
        lines.append(f"{inv.labels['vat'].upper()} {inv.buyer_vat_printed}")
    for line in lines:
        pdf.put(x0, y, line, size, family="Mono")
        y += 5
    pdf.put(x0, y, "-" * width, size, family="Mono")
    y += 6
    for item in inv.items:
        pdf.put(x0, y, item.text[:width], size, family="Mono")
        y += 4.6
        pdf.put(x0 + 6, y, f"{item.qty} x {inv.money(item.unit, symbol=False)}", size, family="Mono")
        pdf.put(x1, y, inv.money(item.net, symbol=False), size, align="R", family="Mono")
        y += 5.4
    pdf.put(x0, y, "-" * width, size, family="Mono")
    y += 6
    for lab, amount, is_total in totals_rows(inv):
        pdf.put(x0, y, lab.upper(), 11 if is_total else size, "B" if is_total else "", family="Mono")
        pdf.put(x1, y, amount, 11 if is_total else size, "B" if is_total else "", "R", family="Mono")
        y += 6 if is_total else 5
    pdf.put(x0, y, "=" * width, size, family="Mono")
    y += 7
    note = payment_note(inv)
    if note:
        pdf.put(x0, y, note, 8, family="Mono")
    else:
        pdf.put(x0, y, f"IBAN: {inv.iban_printed}", size, family="Mono")
        pdf.put(x0, y + 5, f"BIC: {s.bic}", size, family="Mono")
    pdf.put(105, y + 16, s.reg[:70], 6.5, align="C", family="Mono", grey=90)
    record_common(inv)


# --- layout 6: side panel with the supplier (labels above values); number and date in a title sentence;
#     mixed VAT rates and a summary grid whose gross column is the total ---

def layout_panel(pdf: Page, inv: Invoice, rng: random.Random) -> None:
    v = inv.v
    panel_supplier_column(pdf, inv, rng)
    sentence = v["sentence"].format(number=inv.number, date=inv.shown(inv.issued))
    pdf.put(72, 30, sentence, 13.5, "B", fit=124)
    pdf.put(72, 37, f"{inv.label('due')}: {inv.shown(inv.due)}   ·   {inv.label('order_no')}: {inv.order_no}", 8.5)
    pdf.put(72, 52, inv.label("buyer"), 8, "B", grey=100)
    lines = [inv.buyer.name, inv.buyer.street, inv.buyer.city]
    if inv.buyer_vat_printed:
        lines.append(f"{inv.labels['vat']}: {inv.buyer_vat_printed}")
    for k, line in enumerate(lines):
        pdf.put(72, 58 + 4.8 * k, line, 9.5)
    y = items_table(pdf, inv, inv.items, 70, 90, 128, vat_col=True, grid=True, size=8.5, row=6)
    y += 6
    cols = [(v["vat_short"], 100), (v["net_short"], 130), (v["vat_short"], 158), (v["gross"], 195)]
    pdf.set_fill_color(225, 230, 238)
    pdf.rect(70, y - 4.5, 128, 6.5, style="F")
    for head, x in cols:
        pdf.put(x, y, head, 8.5, "B", "R")
    y += 6
    for rate, net, vat in inv.breakdown():
        pdf.put(100, y, inv.rate_text(rate), 8.5, align="R")
        pdf.put(130, y, inv.money(net, symbol=False), 8.5, align="R")
        pdf.put(158, y, inv.money(vat, symbol=False), 8.5, align="R")
        pdf.put(195, y, inv.money(net + vat, symbol=False), 8.5, align="R")
        y += 5.5
    pdf.rule(70, y - 3.5, 198, 0.3)
    vat_total = sum((vv for _, _, vv in inv.breakdown()), Decimal(0))
    pdf.put(72, y + 1, inv.label("total"), 10, "B")
    pdf.put(130, y + 1, inv.money(inv.net, symbol=False), 9, align="R")
    pdf.put(158, y + 1, inv.money(vat_total, symbol=False), 9, align="R")
    pdf.put(195, y + 1, inv.money(inv.total), 10, "B", "R")
    note = payment_note(inv) or v["thanks"]
    pdf.put(72, y + 16, note, 9)
    record_common(inv)


def panel_supplier_column(pdf: Page, inv: Invoice, rng: random.Random) -> None:
    """The grey side panel: the supplier (labels above values), its VAT id, bank and phone, its register line."""
    s, v = inv.sup, inv.v
    pdf.set_fill_color(236, 238, 242)
    pdf.rect(0, 0, 62, 297, style="F")
    y = 24.0
    pdf.put(8, y, inv.labels["seller"].upper(), 7, "B", grey=100)
    y += 6
    pdf.put(8, y, s.name, 11, "B", fit=51)
    y += 5.5
    for line in [s.street, s.city]:
        pdf.put(8, y, line, 8.5)
        y += 4.5
    y += 5
    panel = []
    if inv.vat_printed:
        panel.append((inv.labels["vat"], inv.vat_printed))
    if inv.iban_printed:
        panel += [("IBAN", inv.iban_printed), ("BIC", s.bic)]
    panel.append((v["tel"], f"+{rng.randint(30, 49)} {rng.randint(100, 999)} {rng.randint(100000, 999999)}"))
    for lab, val in panel:
        pdf.put(8, y, lab, 7.5, grey=100)
        y += 4.5
        size = 8.5
        pdf.set_font(pdf.family, "", size)
        while pdf.get_string_width(val) > 51:   # the panel is narrow: a long IBAN is printed smaller
            size -= 0.25
            pdf.set_font(pdf.family, "", size)
        pdf.put(8, y, val, size)
        y += 7
    for k, line in enumerate(wrap(s.reg, 30)):
        pdf.put(8, 275 + 3.5 * k, line, 6.5, grey=90)


def wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


DRAW = {"blocks": layout_blocks, "grid": layout_grid, "letter": layout_letter, "twopage": layout_twopage,
        "receipt": layout_receipt, "panel": layout_panel}
FONT_CYCLE = ["Sans", "Serif", "Cond", "Sans", "Serif", "Cond", "Sans"]


# ---------------------------------------------------------------------------------------------
# Checks: the text layer carries every expected value in the form it was printed
# ---------------------------------------------------------------------------------------------


def pdf_text(path: Path) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    try:
        return "\n".join(page.get_textpage().get_text_range() for page in doc)
    finally:
        doc.close()


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\r", " ")).strip()


def check(path: Path, inv: Invoice) -> list[str]:
    text = squash(pdf_text(path))
    problems = []
    truth = inv.truth()
    for key, value in truth.items():
        if value is None:
            continue
        printed = inv.printed.get(key)
        if printed is None:
            problems.append(f"{key}: expected {value!r} but nothing was recorded as printed")
            continue
        if squash(printed) not in text:
            problems.append(f"{key}: {printed!r} not in the text layer")
        if key in ("vat_id", "iban") and compact_id(printed) != value:
            problems.append(f"{key}: printed {printed!r} does not compact to {value!r}")
        if key == "total_amount" and Decimal(re.sub(r"[^\d]", "", printed)) / 100 != Decimal(value):
            problems.append(f"total: printed {printed!r} is not {value}")
    if inv.vat_id:
        from stdnum.eu import vat as eu_vat

        if inv.sup.country != "CH" and not eu_vat.is_valid(inv.vat_id) and not gb_vat.is_valid(inv.vat_id):
            problems.append(f"vat_id {inv.vat_id} is not valid")
        if inv.sup.country == "CH" and not ch_vat.is_valid(inv.vat_id):
            problems.append(f"vat_id {inv.vat_id} is not valid")
    if inv.iban and not stdnum_iban.is_valid(inv.iban):
        problems.append(f"iban {inv.iban} is not valid")
    if not date(2024, 1, 1) <= inv.issued <= date(2026, 10, 31):
        problems.append(f"date {inv.issued} out of range")
    return problems


def main() -> int:
    rng = random.Random(SEED)
    truth: dict[str, dict] = {}
    failures: list[str] = []
    for li, lang in enumerate(VOCAB):
        order = LAYOUTS[:]
        rng.shuffle(order)
        folder = HERE / lang
        folder.mkdir(exist_ok=True)
        for old in folder.glob("*.pdf"):
            old.unlink()
        for si, (sup, layout) in enumerate(zip(SUPPLIERS[lang], order, strict=True)):
            font = FONT_CYCLE[(li + si) % len(FONT_CYCLE)]
            inv = build_invoice(rng, lang, sup, layout, font)
            pdf = Page(font)
            DRAW[layout](pdf, inv, rng)
            if "reverse" in sup.flags:
                pdf.put(15 if layout != "panel" else 72, 262, inv.v["reverse"], 8.5, "I")
            name = f"{lang}/{si + 1:02d}-{layout}.pdf"
            path = HERE / name
            pdf.output(str(path))
            truth[name] = inv.truth()
            failures += [f"{name}: {p}" for p in check(path, inv)]
    (HERE / "truth.json").write_text(json.dumps(truth, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    expected = sum(1 for t in truth.values() for v in t.values() if v is not None)
    print(f"{len(truth)} invoices, {expected} expected values")
    for line in failures:
        print("FAIL", line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
