"""The language a document is read in, told from the invoice words of an English pass over its first page."""

from __future__ import annotations

from collections.abc import Iterable

from .tesseract import LANGUAGES, Found

# Words invoices print, per language (accents left off: the English pass reads none), then a
# few words of the language's own that none of the other six prints ("und", "het", "oraz"). A
# first page of parties and addresses has few invoice words (a German e-invoice's rendering:
# "Verkäufer", "Käufer", "vom", "und"); told no language, it was read in all seven, English
# first: a quarter more CPU than German and English, and no field better (ocrbench).
_WORDS = {
    "eng": "invoice total amount due date payment bank account number tax bill subtotal description quantity price "
           "thank terms customer "
           "the and with please your",
    "deu": "rechnung rechnungsnummer rechnungsdatum betrag summe gesamt gesamtbetrag mwst ust zahlbar bankverbindung "
           "steuernummer netto brutto datum menge preis bezeichnung zahlung vielen dank lieferant kunde "
           "verkaufer kaufer bestellung lieferung leistungsdatum einzelpreis beschreibung steuer "
           "und der das von vom mit bitte fur",
    "fra": "facture montant tva echeance numero paiement net ttc ht siret quantite prix designation total merci "
           "reglement date client "
           "les et pour avec votre vos",
    "nld": "factuur factuurnummer factuurdatum bedrag totaal btw betaling vervaldatum rekening kvk omschrijving "
           "aantal prijs bedankt datum klant "
           "het van voor uw bij",
    "spa": "factura fecha importe iva cif nif vencimiento pago numero cantidad precio descripcion gracias base "
           "imponible total cliente "
           "el los las para",
    "ita": "fattura data importo totale iva partita scadenza pagamento imponibile quantita prezzo descrizione "
           "grazie numero cliente "
           "di della per gli",
    "pol": "faktura kwota razem nip sprzedawca nabywca termin platnosci zaplaty brutto netto data ilosc cena nazwa "
           "wystawienia sprzedazy slownie "
           "dla oraz nie za",
}
_LANGUAGE_WORDS = {lang: frozenset(words.split()) for lang, words in _WORDS.items()}
# Resolution of the English pass that tells the language: a ninth of the pixels of DPI. It
# tells the corpus's languages as 150 dpi does, in 0.29 s of CPU a page instead of 0.42. It
# reads the top quarter of the page (title, parties), then each next quarter only while none
# has told a language: Tesseract's time goes with the lines it reads, whatever the resolution,
# and halves cost a tenth more CPU for the same languages told (ocrbench).
DETECT_DPI = 100
DETECT_BANDS = 4
DETECT_WORDS = 5  # fewer words than this tell nothing: the next page is asked again


def told(words: list[Found]) -> str | None:
    """The language whose invoice words stand out among ``words`` ("deu"), None when none does."""
    return told_text(word.text for word in words)


def told_text(words: Iterable[str]) -> str | None:
    """``told`` for words of text: a text layer's, to read the images on its pages in."""
    import unicodedata

    seen = set()
    for word in words:
        plain = unicodedata.normalize("NFKD", word.casefold()).encode("ascii", "ignore").decode()
        seen.add(plain.strip(".,:;()#/-"))
    scores = sorted(((len(seen & vocabulary), lang) for lang, vocabulary in _LANGUAGE_WORDS.items()), reverse=True)
    (best, lang), (second, _) = scores[0], scores[1]
    return None if best < 2 or best == second else lang


def language(words: list[Found]) -> str:
    """The languages to read a document in: its own first, then English; all seven, English
    first, for an English one and when no language stands out among the words of its first
    page (for an English invoice the others still save a word English reads badly: a VAT id,
    an invoice number, a German supplier's umlaut; a dense page is read in English alone,
    ``agent.reading.ocr.DENSE_WORDS``)."""
    lang = told(words)
    return LANGUAGES if lang is None or lang == "eng" else f"{lang}+eng"
