"""A review's findings: what stands between Alice and paying an invoice, one structured dict each.

A finding is ``{"code", "field", "words", "blocks", "readings"}``: a stable code, the field it is
about (None: the whole document), the sentence Alice reads, whether it blocks (a document cannot
read *OK*, be marked handled or approved while a blocking finding stands, unless a member accepts
it with a reason), and for a disagreement between two sources the readings, each a value with
its evidence. ``make`` builds one; ``read`` reads one back from a result, and takes a plain
string (what results stored by earlier versions hold) as a blocking finding of code ``finding``.
Codes this module does not know are shown by their words and honoured by their ``blocks``.

``settle`` decides a result by its findings: the internal rules a field's check applies (an old
date, a currency the tenant does not pay in, a credit note) become Alice's own findings, never
requests to the supplier; each finding is marked accepted when a member accepted it; and a field
that a standing blocking finding names reads *to check*, with the finding's readings as its
candidates. It is pure and idempotent: a settled result settles again to the same.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from .fields import REQUIRED, checks

LEGACY = "finding"  # the code of a finding stored as a plain string
MAX_WORDS = 400  # a disagreement names both values and what to do about it
MAX_READINGS = 4
MAX_REASON = 300

# The checks that are the tenant's own rules, not the supplier's errors: the detail the field's
# check gives -> the finding's code. Alice accepts them (with a reason); the supplier is never asked.
RULES = {
    checks.OLD_DATE: "old_date",
    checks.NOT_PAID_CURRENCY: "currency_not_paid",
    checks.CREDIT_NOTE: "credit_note",
}
RULE_CODES = frozenset(RULES.values())
RULE_WORDS = {
    "old_date": "the invoice date is more than ten years old: check that this invoice is still to be paid",
    "currency_not_paid": "the invoice is in {value}, not a currency your team pays in",
    "credit_note": "the total is negative: this looks like a credit note, not an invoice to pay",
}
# A field's detail while a disagreement on it stands (its readings show both values).
DISAGREE = "two sources of the document disagree on it: see the findings"
# Findings whose subject is the money itself: the page asks for a phone call to the supplier.
BANK_FIELDS = frozenset({"iban"})


def make(code: str, words: str, *, field: str | None = None, blocks: bool = True,
         readings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One finding, bounded: its words cut to ``MAX_WORDS``, at most ``MAX_READINGS`` readings."""
    finding: dict[str, Any] = {"code": code, "field": field, "words": words[:MAX_WORDS], "blocks": blocks}
    if readings:
        finding["readings"] = [r for r in readings if isinstance(r, dict)][:MAX_READINGS]
    return finding


def reading(value: Any, evidence: Any, source: str) -> dict[str, Any]:
    """One reading of a disagreement: the value, where it was read (``source``: "xml", "page"...)."""
    return {"value": None if value is None else str(value), "source": source,
            "evidence": evidence if isinstance(evidence, dict) else None}


def read(item: Any) -> dict[str, Any] | None:
    """A stored finding as a dict of the shape ``make`` builds; a plain string is a blocking
    finding of code ``finding``; anything else (no words) is None."""
    if isinstance(item, str):
        return make(LEGACY, item) if item.strip() else None
    if not isinstance(item, dict) or not isinstance(item.get("words"), str) or not item["words"].strip():
        return None
    field = item.get("field")
    found = make(str(item.get("code") or LEGACY)[:40], item["words"],
                 field=field if isinstance(field, str) and field else None,
                 blocks=item.get("blocks") is not False,
                 readings=item.get("readings") if isinstance(item.get("readings"), list) else None)
    if isinstance(item.get("accepted"), dict):
        found["accepted"] = item["accepted"]
    return found


def of(result: Any) -> list[dict[str, Any]]:
    """The result's findings, each read by ``read``, once each (by ``key``), in order."""
    items = result.get("findings") if isinstance(result, dict) else None
    found: dict[str, dict[str, Any]] = {}
    for item in items if isinstance(items, list) else []:
        finding = read(item)
        if finding is not None:
            found.setdefault(key(finding), finding)
    return list(found.values())


def key(finding: dict[str, Any]) -> str:
    """What names one finding across reviews and corrections: its code, its field and its words."""
    digest = hashlib.sha256(str(finding.get("words", "")).encode()).hexdigest()[:12]
    return f"{finding.get('code', LEGACY)}:{finding.get('field') or ''}:{digest}"


def line(finding: dict[str, Any]) -> str:
    """A finding as one line (the note, the CSV): its words, and who accepted it and why, once accepted."""
    accepted = finding.get("accepted")
    if isinstance(accepted, dict):
        return f"{finding['words']} (accepted by {accepted.get('by') or 'a member'}: {accepted.get('reason') or ''})"
    return str(finding["words"])


def words(items: Any) -> list[str]:
    """Each finding's sentence (strings and dicts alike)."""
    return [f["words"] for f in (read(item) for item in items or []) if f is not None]


def standing(items: Any) -> list[dict[str, Any]]:
    """The blocking findings nobody accepted."""
    return [f for f in (read(item) for item in items or []) if f is not None and f["blocks"]
            and not f.get("accepted")]


def about_bank(items: Any) -> bool:
    """Whether a finding is about the bank account (its field, or an old string naming the IBAN)."""
    return any(f["field"] in BANK_FIELDS or "iban" in f["words"].lower() for f in (read(i) for i in items or [])
               if f is not None)


def rules(fields: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Alice's findings from the tenant's own rules, one per field whose check applied one."""
    found = []
    for name, field in fields.items():
        if not isinstance(field, dict):
            continue
        code = RULES.get(str(field.get("detail") or ""))
        if code is None or field.get("status") != "malformed":
            continue
        found.append(make(code, RULE_WORDS[code].format(value=field.get("value") or "it"), field=name))
    return found


def settle(result: Any, accepted: Mapping[str, dict[str, Any]] | None = None) -> Any:
    """``result`` decided by its findings (see the module's text); ``accepted`` maps a finding's
    ``key`` to who accepted it, when and why (None: keep the marks the result already carries).
    A result without fields comes back as it is."""
    if not isinstance(result, dict) or not isinstance(result.get("fields"), dict):
        return result
    stored = of(result)
    if accepted is None:  # the marks the result carries (a result settled before)
        accepted = {key(f): f["accepted"] for f in stored if isinstance(f.get("accepted"), dict)}
    fields = {name: _unsettled(field) for name, field in result["fields"].items()}
    found = [f for f in stored if f["code"] not in RULE_CODES or not f["field"]] + rules(fields)
    for finding in found:
        mark = accepted.get(key(finding))
        finding.pop("accepted", None)
        if isinstance(mark, dict):
            finding["accepted"] = mark
        finding["key"] = key(finding)  # what a client names it by, to accept it
    for finding in found:
        name = finding["field"]
        field = fields.get(name) if name else None
        if not isinstance(field, dict):
            continue
        if finding["code"] in RULE_CODES:
            fields[name] = _decided(field, finding)
        elif (finding["blocks"] and not finding.get("accepted") and field.get("status") in ("present", "to_check")
              and not isinstance(field.get("correction"), dict)):
            fields[name] = _to_check(field, finding)
    settled = {**result, "fields": fields}
    if found or "findings" in result:
        settled["findings"] = found
    return settled


def _unsettled(field: Any) -> Any:
    """A field as its check left it, before ``settle`` changed it."""
    if not isinstance(field, dict) or not isinstance(field.get("settled_from"), dict):
        return field
    before = field["settled_from"]
    restored = {k: v for k, v in field.items() if k not in ("settled_from", "candidates", "status", "detail")}
    restored.update({k: before[k] for k in ("status", "detail", "candidates") if k in before})
    return restored


def _changed(field: dict[str, Any], **changes: Any) -> dict[str, Any]:
    before = {k: field[k] for k in ("status", "detail", "candidates") if k in field}
    return {**field, **changes, "settled_from": before}


def _decided(field: dict[str, Any], finding: dict[str, Any]) -> dict[str, Any]:
    """A field an internal rule flagged: *to check* while the finding stands, *OK* once accepted."""
    accepted = finding.get("accepted")
    if accepted:
        by, reason = accepted.get("by") or "a member", accepted.get("reason") or ""
        return _changed(field, status="present", detail=f"{field.get('detail')}; accepted by {by}: {reason}")
    return _changed(field, status="to_check")


def _to_check(field: dict[str, Any], finding: dict[str, Any]) -> dict[str, Any]:
    """A field a standing blocking finding names: *to check*, with the finding's readings as candidates."""
    readings = [r for r in finding.get("readings") or [] if isinstance(r, dict) and r.get("value") not in (None, "")]
    changes: dict[str, Any] = {"status": "to_check", "detail": finding["words"]}
    if len(readings) > 1:  # the readings say it: the detail only points at the finding
        changes["candidates"] = [{"value": r["value"], "evidence": r.get("evidence")} for r in readings]
        changes["detail"] = DISAGREE
    return _changed(field, **changes)


def open_fields(result: Any) -> list[str]:
    """The required fields that would not pass even with every finding accepted: what Approve
    cannot confirm (to correct, not found, two readings of the review's own to choose from)."""
    if not isinstance(result, dict) or not isinstance(result.get("fields"), dict):
        return []
    every = {key(f): acceptance(by="", at="", reason="") for f in of(result)}
    decided = settle(result, every)["fields"]
    return [name for name in REQUIRED if (decided.get(name) or {}).get("status") != "present"]


def acceptance(*, by: str, at: str, reason: str) -> dict[str, Any]:
    """The mark of an accepted finding."""
    return {"by": by, "at": at, "reason": reason[:MAX_REASON]}
