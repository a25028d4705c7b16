"""The language modules (``agent.reading.languages``): each declares the same kinds of labels, and each language's
labels are read through the patterns ``agent.reading.labels`` assembles, the way the reader compiles them."""

from __future__ import annotations

import ast
import pkgutil
import re
import sys
from datetime import date
from pathlib import Path

import pytest

from agent.reading import fields, labels, languages
from agent.reading.fields.patterns import _compile
from agent.review import model_reader

# One printed label of each required kind per language (months: one printed name per month number).
SAMPLES: dict[str, dict[str, str]] = {
    "en": {"INVOICE_DATE": "Invoice date:", "DUE_DATE": "Payment due by", "TOTAL_GROSS": "Grand total",
           "TOTAL_DUE": "Balance due", "NET": "Subtotal", "VAT_AMOUNT": "VAT amount", "DEPOSIT": "Amount paid"},
    "de": {"INVOICE_DATE": "Rechnungsdatum:", "DUE_DATE": "Fällig am", "TOTAL_GROSS": "Gesamtbetrag",
           "TOTAL_DUE": "Zu zahlender Betrag", "NET": "Nettobetrag", "VAT_AMOUNT": "MwSt.-Betrag",
           "DEPOSIT": "Erhaltene Anzahlung"},
    "fr": {"INVOICE_DATE": "Date de facture", "DUE_DATE": "Date d'échéance", "TOTAL_GROSS": "Total TTC",
           "TOTAL_DUE": "Net à payer", "NET": "Total HT", "VAT_AMOUNT": "Montant TVA", "DEPOSIT": "Acompte"},
    "nl": {"INVOICE_DATE": "Factuurdatum", "DUE_DATE": "Vervaldatum", "TOTAL_GROSS": "Totaalbedrag",
           "TOTAL_DUE": "Te betalen", "NET": "Subtotaal", "VAT_AMOUNT": "BTW-bedrag", "DEPOSIT": "Voorschot"},
    "es": {"INVOICE_DATE": "Fecha de emisión", "DUE_DATE": "Vencimiento", "TOTAL_GROSS": "Importe total",
           "TOTAL_DUE": "Total a pagar", "NET": "Base imponible", "VAT_AMOUNT": "Cuota IVA", "DEPOSIT": "Anticipo"},
    "it": {"INVOICE_DATE": "Data fattura", "DUE_DATE": "Data di scadenza", "TOTAL_GROSS": "Totale documento",
           "TOTAL_DUE": "Netto a pagare", "NET": "Imponibile", "VAT_AMOUNT": "Imposta", "DEPOSIT": "Acconto"},
    "pl": {"INVOICE_DATE": "Data wystawienia", "DUE_DATE": "Termin płatności", "TOTAL_GROSS": "Razem brutto",
           "TOTAL_DUE": "Do zapłaty", "NET": "Razem netto", "VAT_AMOUNT": "Kwota VAT", "DEPOSIT": "Zaliczka"},
    "no": {"INVOICE_DATE": "Fakturadato", "DUE_DATE": "Forfallsdato", "TOTAL_GROSS": "Totalbeløp",
           "TOTAL_DUE": "Å betale", "NET": "Sum eks. mva", "VAT_AMOUNT": "Mva-beløp", "DEPOSIT": "Forskudd"},
    "sv": {"INVOICE_DATE": "Fakturadatum", "DUE_DATE": "Förfallodatum", "TOTAL_GROSS": "Summa inkl. moms",
           "TOTAL_DUE": "Att betala", "NET": "Summa exkl. moms", "VAT_AMOUNT": "Momsbelopp", "DEPOSIT": "Förskott"},
    "da": {"INVOICE_DATE": "Fakturadato", "DUE_DATE": "Forfaldsdato", "TOTAL_GROSS": "I alt inkl. moms",
           "TOTAL_DUE": "At betale", "NET": "Beløb ekskl. moms", "VAT_AMOUNT": "Momsbeløb", "DEPOSIT": "Forskud"},
    "pt": {"INVOICE_DATE": "Data da fatura", "DUE_DATE": "Data de vencimento", "TOTAL_GROSS": "Valor total",
           "TOTAL_DUE": "Total a pagar", "NET": "Total sem IVA", "VAT_AMOUNT": "Valor do IVA", "DEPOSIT": "Já pago"},
    "cs": {"INVOICE_DATE": "Datum vystavení", "DUE_DATE": "Datum splatnosti", "TOTAL_GROSS": "Celková částka",
           "TOTAL_DUE": "Celkem k úhradě", "NET": "Celkem bez DPH", "VAT_AMOUNT": "DPH", "DEPOSIT": "Záloha"},
    "et": {"INVOICE_DATE": "Arve kuupäev:", "DUE_DATE": "Maksetähtaeg", "TOTAL_GROSS": "Summa kokku",
           "TOTAL_DUE": "Tasuda", "NET": "Summa käibemaksuta", "VAT_AMOUNT": "Käibemaks 22%", "DEPOSIT": "Ettemaks"},
    "ro": {"INVOICE_DATE": "Data emiterii:", "DUE_DATE": "Data scadenței", "TOTAL_GROSS": "Total general",
           "TOTAL_DUE": "Total de plată", "NET": "Total fără TVA", "VAT_AMOUNT": "Valoare TVA", "DEPOSIT": "Avans"},
    "fi": {"INVOICE_DATE": "Laskun päivämäärä", "DUE_DATE": "Eräpäivä", "TOTAL_GROSS": "Yhteensä sis. alv",
           "TOTAL_DUE": "Maksettava yhteensä", "NET": "Veroton summa", "VAT_AMOUNT": "Alv-osuus",
           "DEPOSIT": "Ennakkomaksu"},
    "zh": {"INVOICE_DATE": "开票日期:", "DUE_DATE": "付款期限", "TOTAL_GROSS": "价税合计", "TOTAL_DUE": "应付金额",
           "NET": "不含税金额", "VAT_AMOUNT": "税额", "DEPOSIT": "已付款"},
}


def _name(module: object) -> str:
    return getattr(module, "__name__", "").rsplit(".", 1)[-1]


def test_every_module_in_the_package_is_a_language_in_its_own_place_and_has_its_samples():
    on_disk = {info.name for info in pkgutil.iter_modules(languages.__path__)}
    assembled = [_name(module) for module in languages.MODULES]
    assert set(assembled) == on_disk
    assert set(SAMPLES) == on_disk
    orders = [module.ORDER for module in languages.MODULES]
    assert orders == sorted(set(orders)), "two languages declare the same ORDER"


def test_a_new_module_in_the_package_is_a_new_language_with_nothing_else_to_edit(tmp_path, monkeypatch):
    """Adding a language is adding its module: ``MODULES`` finds it, last when its ORDER is the highest."""
    (tmp_path / "xx.py").write_text('ORDER = 999\nINVOICE_DATE = [r"\\bxdate\\b"]\n', encoding="utf-8")
    monkeypatch.setattr(languages, "__path__", [*languages.__path__, str(tmp_path)])
    found = languages._discovered()
    assert [_name(module) for module in found][:-1] == [_name(module) for module in languages.MODULES]
    assert _name(found[-1]) == "xx"
    monkeypatch.delitem(sys.modules, "agent.reading.languages.xx")


def _entries(module: object, name: str) -> list[str]:
    """A module's entry as regular expression sources (a VAT id label without its country)."""
    entry = getattr(module, name)
    if name in languages.NAMED:
        return list(entry)
    return [source for source, _country in entry] if name == "VAT_ID" else entry


@pytest.mark.parametrize("module", languages.MODULES, ids=_name)
def test_each_language_declares_the_same_kinds_of_entries(module):
    defined = {name for name in vars(module) if name.isupper()}
    assert set(languages.REQUIRED) <= defined, sorted(set(languages.REQUIRED) - defined)
    assert defined <= set(languages.ENTRIES), sorted(defined - set(languages.ENTRIES))
    assert all(isinstance(getattr(module, name), int) for name in defined if name.endswith("ORDER"))
    for name in {name for name in defined - {"MONTHS"} if not name.endswith("ORDER")}:
        if name in languages.NAMED:  # words with what each names: a currency's or a country's code
            named = getattr(module, name)
            assert isinstance(named, dict) and named, name
            assert all(isinstance(word, str) and word == word.lower() and isinstance(code, str)
                       for word, code in named.items()), name
            continue
        entry = _entries(module, name)
        assert isinstance(entry, list) and entry and all(isinstance(source, str) for source in entry), name
        for source in entry:
            re.compile(source)
    if "VAT_ID" in defined:
        assert all(country is None or re.fullmatch("[A-Z]{2}", country) for _source, country in module.VAT_ID)
    assert sorted(module.MONTHS) == list(range(1, 13))
    assert all(module.MONTHS[number].split() for number in range(1, 13))


def _assembled_text() -> str:
    """Every pattern ``agent.reading.labels`` assembles, as one text."""
    parts: list[str] = []
    for name, value in vars(labels).items():
        if not name.isupper():
            continue
        if isinstance(value, re.Pattern):
            parts.append(value.pattern)
        elif isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(item if isinstance(item, str) else item[0] for item in value)
        elif isinstance(value, (dict, frozenset)):  # words with their codes, the small words of a name
            parts.extend(value)
    return "\n".join(parts)


@pytest.mark.parametrize("module", languages.MODULES, ids=_name)
def test_every_entry_a_language_defines_is_assembled_into_the_labels(module):
    assembled = _assembled_text()
    for name in {name for name in vars(module) if name.isupper() and not name.endswith("ORDER")} - {"MONTHS"}:
        for source in _entries(module, name):
            assert source.replace(languages.NUMBER, labels.NUMBER_SIGN) in assembled, (name, source)


# What ``agent.reading.labels`` itself may spell, lowercase, in its patterns: no language's words, only the signs every
# language prints (currency codes, "IBAN", "BIC", "SWIFT", "id", "no.", "nr.", a web address's "www", "https").
SHARED = {"iban", "bic", "swift", "eur", "pln", "chf", "gbp", "usd", "id", "no", "nr", "www", "https"}


# What takes an entry's name: ``_any("SELLER")``, ``languages.gather("NET")``...
GATHERS = {"_any", "_numbered", "gather", "pairs", "alternatives"}


def _pattern_words(path: Path) -> set[str]:
    """The lowercase words spelt in a module's patterns: its string constants, less docstrings, the names of the
    entries it gathers (``_any("SELLER")``) and the legal forms (a country's, written as registered)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef)) and ast.get_docstring(node) is not None:
            skipped.add(id(node.body[0].value))
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in GATHERS:
            skipped.update(id(arg) for arg in node.args)
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "LEGAL_FORM" for t in node.targets):
            skipped.update(id(child) for child in ast.walk(node.value))
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            text = re.sub(r"\[[^\]]*\]|\\[A-Za-z]|\(\?P<\w+>", " ", node.value)  # classes, escapes, group names
            words |= {word for word in re.findall(r"[^\W\d_]{2,}", text) if word.islower()}
    return words


def test_the_labels_spell_no_language_of_their_own():
    """A language is one place: ``agent.reading.labels`` is the shared structure, every word is a language module's."""
    assert _pattern_words(Path(labels.__file__)) <= SHARED
    assert "from .languages" not in Path(labels.__file__).read_text(encoding="utf-8")  # no language by name


def test_a_word_put_into_the_labels_would_be_found(tmp_path):
    scratch = tmp_path / "labels.py"
    extra = '\nEXTRA = r"\\b(?:rechnung|f[ae]cture)\\b"\nMORE = re.compile(r"\\bvotre\\b" + _any("NET"))\n'
    scratch.write_text(Path(labels.__file__).read_text(encoding="utf-8") + extra, encoding="utf-8")
    assert _pattern_words(scratch) - SHARED == {"rechnung", "cture", "votre"}


@pytest.mark.parametrize("module", languages.MODULES, ids=_name)
def test_the_model_reader_reads_every_languages_month_names(module):
    """The model's dates are checked against the languages' month names, not a table of the reader's own."""
    assert not hasattr(model_reader, "MONTHS")
    for number, names in module.MONTHS.items():
        for name in names.split():
            assert model_reader.month_of(name) == number, name
            assert model_reader.month_of(name.upper() + ".") == number, name


@pytest.mark.parametrize("module", languages.MODULES, ids=_name)
def test_each_languages_labels_are_read_by_its_own_entry_and_by_the_assembled_pattern(module):
    for kind, label in SAMPLES[_name(module)].items():
        assert _compile(getattr(module, kind)).search(label), (kind, label)
        assert _compile(getattr(labels, kind)).search(label), (kind, label)
    for number, names in module.MONTHS.items():
        assert all(labels.MONTHS[name] == number for name in names.split())


def test_a_later_language_never_takes_an_earlier_ones_words():
    """The month names of one language never name another month in a language assembled before it."""
    seen: dict[str, int] = {}
    for module in languages.MODULES:
        for number, names in module.MONTHS.items():
            for name in names.split():
                assert seen.setdefault(name, number) == number, (_name(module), name)


@pytest.mark.parametrize("label", ["Data de emissão:", "Data da emissão", "Data da fatura", "Data de fatura"])
def test_portuguese_issue_dates_are_the_invoices_date_label(label):
    """Portugal and Brazil print "Data de emissão" as often as "Data da fatura"."""
    from agent.reading.languages import pt

    assert _compile(pt.INVOICE_DATE).search(label)
    assert _compile(labels.INVOICE_DATE).search(label)


# A title of each language, followed by its number: "<title> 2041" numbers the invoice.
TITLES = {"en": "Tax Invoice", "de": "Honorarnote", "fr": "Note d'honoraires", "nl": "Creditnota",
          "es": "Factura", "it": "Nota di credito", "pl": "Faktura VAT", "no": "Kreditnota", "pt": "Fatura-recibo",
          "cs": "Daňový doklad", "et": "Kreeditarve"}


@pytest.mark.parametrize("code", sorted(TITLES))
def test_each_languages_invoice_titles_are_its_own_and_assembled(code):
    module = next(m for m in languages.MODULES if _name(m) == code)
    title = TITLES[code]
    assert re.fullmatch("|".join(module.INVOICE_TITLE), title, re.IGNORECASE), title
    assert re.compile(labels.INVOICE_TITLE, re.IGNORECASE).match(f"{title} 2041").end() == len(title) + 1


@pytest.mark.parametrize("head", ["VAT / USt-IdNr.:", "VAT USt-IdNr.:", "VAT/Ust-Nr.:"])
def test_a_german_vat_label_beside_the_english_one_names_the_number(head):
    """German's VAT id labels are tried before English's "VAT", which on such a head names only the tax."""
    text = f"Lindenhof GmbH\nInvoice 4\n{head} 136695976\nTotal 12.00 EUR\n"
    assert fields.check_all(text, today=date(2026, 12, 6))["vat_id"]["value"] == "136695976"


@pytest.mark.parametrize("name", languages.NAMED)
def test_no_two_languages_name_one_word_differently(name):
    """The languages' named words are merged into one table: a word two languages spell names one thing."""
    seen: dict[str, str] = {}
    for module in languages.MODULES:
        for word, code in getattr(module, name, {}).items():
            assert seen.setdefault(word, code) == code, (_name(module), word)


# --- the field readers (``agent.reading.fields``) and the appended documents' titles spell no language either ---------
# Words the readers' patterns may spell themselves: signs every language prints (currency codes and symbols,
# "IBAN", "BIC", "id", "no", "nr"), web addresses' and countries' codes, and what is a country's, not a language's:
# a legal form printed after a comma ("Acme, plc"), the supplier's country's signs in ``amounts`` ("F-skatt",
# "México"). The other legal forms, Finnish's seller heading and Romanian's receipt wait in
# ``agent.reading.fields.partywords`` (docs/languages.md).
SIGNS = SHARED | {"kr", "zł", "com", "net", "org", "biz", "info", "io", "co", "uk", "us", "eu", "is",
                  "ar", "at", "au", "be", "br", "ca", "ch", "cl", "cn", "cz", "de", "dk", "ee", "es", "fi", "fr", "hk",
                  "ie", "in", "it", "jp", "lt", "lu", "lv", "mx", "nl", "nz", "pl", "pt", "se", "sg", "sk"}
COUNTRYS = {"plc", "skatt", "xico"}
READERS = ["fields/patterns.py", "fields/parties.py", "fields/numbers.py", "fields/terms.py", "fields/identifiers.py",
           "fields/amounts.py", "fields/dates.py", "fields/values.py", "fields/page.py", "appended.py"]
# The calls a pattern is spelt in: ``re.compile(...)``, ``re.search(...)``...
PATTERN_CALLS = {"compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "split"}


def _regex_words(path: Path) -> set[str]:
    """The lowercase words a module spells in its patterns: the string constants of each ``re.compile``'s (or
    ``re.search``'s...) pattern, and of the module's names it is built of (``_NAME_WORDS``), followed through."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assigned = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name)}
    words: set[str] = set()
    followed: set[str] = set()

    def walk(node: ast.AST) -> None:
        for child in ast.walk(node):
            if isinstance(child, ast.Constant) and isinstance(child.value, str):
                text = re.sub(r"\[[^\]]*\]|\\[A-Za-z]|\(\?P<\w+>", " ", child.value)  # classes, escapes, groups
                words.update(word for word in re.findall(r"[^\W\d_]{2,}", text) if word.islower())
            elif isinstance(child, ast.Name) and child.id in assigned and child.id not in followed:
                followed.add(child.id)
                walk(assigned[child.id])

    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PATTERN_CALLS
                and getattr(node.func.value, "id", "") == "re" and node.args):
            walk(node.args[0])
    return words


@pytest.mark.parametrize("path", READERS)
def test_the_field_readers_spell_no_language_of_their_own(path):
    """A language is one place: the readers' patterns are the languages' words (``agent.reading.labels``) in their own
    structure, with the signs every language prints and a country's own words."""
    assert _regex_words(Path(labels.__file__).parent / path) <= SIGNS | COUNTRYS


def test_a_word_put_into_a_readers_pattern_would_be_found(tmp_path):
    scratch = tmp_path / "parties.py"
    extra = '\n_MORE = r"(?:geldinstitut|iban)"\nBANK = re.compile(rf"\\b{_MORE}\\b|{labels.BANK_WORD}", re.I)\n'
    source = (Path(labels.__file__).parent / "fields/parties.py").read_text(encoding="utf-8")
    scratch.write_text(source + extra, encoding="utf-8")
    assert _regex_words(scratch) - SIGNS - COUNTRYS == {"geldinstitut"}
