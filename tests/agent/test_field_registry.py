"""Each field is one declaration (``fields.registry``): how a page is read for it, how its value is checked,
what the note asks for, what the model is told, which column the export gives it all follow from it."""

from __future__ import annotations

import importlib
from datetime import date
from typing import Any

from agent import presentation
from agent.reading import fields
from agent.reading.fields import registry
from agent.review import model_reader, tools

TODAY = date(2026, 12, 6)
# A made-up invoice printing every field a page can give.
INVOICE = """Lindenhof Werkstatt GmbH
USt-IdNr.: DE136695976
Rechnung Nr. 2026-0042
Rechnungsdatum: 01.11.2026
Rechnungsempfänger: Kellerei Sommer KG
Nettobetrag 100,00 EUR
MwSt. 19% 19,00 EUR
Gesamtbetrag 119,00 EUR
Fällig am 15.11.2026
IBAN DE89 3704 0044 0532 0130 00
"""


def test_each_field_is_declared_once_with_all_its_kind_needs():
    names = [declared.name for declared in registry.FIELDS]
    assert len(set(names)) == len(names)
    assert len({declared.label for declared in registry.FIELDS}) == len(names)  # one export column each
    for declared in registry.FIELDS:
        assert declared.value in (registry.TEXT, registry.DATE, registry.AMOUNT, registry.NAME)
        if declared.kind == registry.ASKED:
            assert declared.read and declared.check and declared.ask and declared.describe, declared.name
        elif declared.kind == registry.READ_ALSO:
            assert declared.read and not declared.ask and declared.check is None, declared.name
        else:
            assert declared.kind == registry.FROM_XML and declared.read is None, declared.name


def test_what_the_review_asks_of_the_fields_is_their_declarations():
    asked = [d for d in registry.FIELDS if d.kind == registry.ASKED]
    assert tuple(d.name for d in asked) == fields.REQUIRED
    assert tuple(d.name for d in registry.FIELDS if d.kind == registry.READ_ALSO) == fields.ALSO_READ
    assert tuple(d.name for d in registry.FIELDS if d.kind == registry.FROM_XML) == fields.XML_ALSO_READ
    assert set(fields.DATE_FIELDS) == {d.name for d in registry.FIELDS if d.value == registry.DATE}
    assert set(fields.AMOUNT_FIELDS) == {d.name for d in registry.FIELDS if d.value == registry.AMOUNT}
    assert set(fields.NAME_FIELDS) == {d.name for d in registry.FIELDS if d.value == registry.NAME}
    assert {d.name: d.label for d in registry.FIELDS} == fields.LABELS
    assert {d.name: d.ask for d in asked} == fields.ASK
    # the model is asked for the required fields, each as its declaration describes it
    assert model_reader.SCHEMA["required"] == list(fields.REQUIRED)
    assert {name: p["description"] for name, p in model_reader.SCHEMA["properties"].items()} == \
        {d.name: d.describe for d in asked}


def test_a_page_is_read_for_every_field_with_a_reader_in_the_declared_order():
    found = fields.check_all(INVOICE, today=TODAY)
    assert list(found) == [d.name for d in registry.FIELDS if d.read is not None]
    assert {name: found[name]["status"] for name in fields.REQUIRED} == dict.fromkeys(fields.REQUIRED, "present")
    assert found["due_date"]["value"] == "2026-11-15" and found["net_amount"]["value"] == "100.00"


def test_each_field_is_checked_by_its_declared_check_on_its_own():
    assert fields.check_value("iban", "DE89 3704 0044 0532 0130 00").status == "present"
    assert fields.check_value("iban", "DE00 3704 0044 0532 0130 00").status == "malformed"
    assert fields.check_value("vat_id", "136695976", country="DE").value == "DE136695976"
    assert fields.check_value("invoice_date", "2027-01-01", today=TODAY).status == "malformed"  # in the future
    assert fields.check_value("currency", "CHF", paid=frozenset({"EUR"})).status == "malformed"


def _result() -> dict[str, Any]:
    found = fields.check_all(INVOICE, today=TODAY)
    return {"fields": {name: found[name] for name in fields.REQUIRED},
            "also_read": {name: found[name] for name in fields.ALSO_READ}}


def test_every_declared_field_has_its_column_in_the_export_and_the_note_asks_for_each_required_one():
    columns = presentation.export_columns(_result())
    assert [label for label in columns if label in fields.LABELS.values()] == [d.label for d in registry.FIELDS]
    missing = {name: {"status": "missing", "value": None, "detail": ""} for name in fields.REQUIRED}
    nothing = {"fields": missing, "reading": "text", "findings": [], "readable": True, "pages": 1, "has_text": True,
               "source": "document", "document_name": "invoice.pdf", "warnings": []}
    note = tools.review_note(nothing)
    for declared in registry.FIELDS:
        if declared.kind == registry.ASKED:
            assert declared.label in note and declared.ask in note, declared.name


def _order_reference(reading: registry.Reading) -> dict[str, Any]:
    return {"status": "present", "value": "PO-7", "detail": "", "evidence": None}


def test_a_new_declaration_is_all_a_new_field_needs(monkeypatch):
    """Declared, a field is read off the page, exported in its own column and shown in the note."""
    extra = registry.Declared("order_reference", "Order reference", registry.READ_ALSO, read=_order_reference)
    monkeypatch.setattr(registry, "FIELDS", (*registry.FIELDS, extra))
    try:
        importlib.reload(fields)  # its views of the declarations, as when the module is first imported
        found = fields.check_all(INVOICE, today=TODAY)
        assert found["order_reference"]["value"] == "PO-7"
        result = _result()
        assert result["also_read"]["order_reference"]["value"] == "PO-7"
        assert presentation.export_columns(result)["Order reference"] == "PO-7"
        assert "- Order reference: PO-7" in tools.also_read_lines(result["also_read"], result["fields"])
    finally:
        monkeypatch.undo()
        importlib.reload(fields)
    assert "order_reference" not in fields.LABELS
