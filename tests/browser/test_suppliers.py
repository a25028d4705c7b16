"""The supplier register in a real browser: the list, a supplier with its IBAN history, an edit that
writes its history line, the import page, the tenant's tax ids and currencies; at 1280 px and
390 px with no sideways scrolling and no serious or critical axe-core finding (see ``audit``)."""

from __future__ import annotations

import pytest

from jobs.clock import system_clock
from suppliers import imports, services

from .audit import audit
from .conftest import off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")
LONG_NAME = "Internationale Werkzeug- und Maschinenbau-Vertriebsgesellschaft Norddeutschland mbH & Co. KG"
REGISTER = f"""name,tax_ids,ibans,currency,usual_min,usual_max
Nordlicht Bürobedarf GmbH,DE136695976,DE89 3704 0044 0532 0130 00,EUR,100,900
{LONG_NAME},ATU13585627,GB82WEST12345698765432|NL91ABNA0417164300,EUR,,
"""


def setup(make_member):
    from django.contrib.auth.models import Permission

    alice = make_member("acme", ALICE[0], password=ALICE[1])
    alice.user_permissions.add(Permission.objects.get(codename="change_supplier", content_type__app_label="suppliers"))
    services.import_rows(tenant_id=alice.tenant_id, rows=imports.parse(REGISTER), by=services.By(name="import"),
                         now=system_clock.now())
    from suppliers.models import Supplier

    return Supplier.objects.get(name="Nordlicht Bürobedarf GmbH").pk


def test_the_register_pages_at_both_widths(make_member, login):
    nordlicht = off_loop(setup, make_member)
    page = login(*ALICE, start="/suppliers")
    rows = page.locator("#suppliers tbody tr")
    assert rows.count() == 2 and "GB82 WEST 1234 5698 7654 32" in page.inner_text("#suppliers")
    assert page.get_attribute("nav a[href='/suppliers']", "aria-current") == "page"
    audit(page, "suppliers-list")

    page.click(f"a[href='/suppliers/{nordlicht}']")
    page.wait_for_selector("#supplier-ibans")
    assert "DE89 3704 0044 0532 0130 00" in page.inner_text("#supplier-ibans")
    page.fill("#id_ibans", "DE89 3704 0044 0532 0130 00\nFR14 2004 1010 0505 0001 3M02 606")
    page.click("#supplier-edit button[type=submit]")
    page.wait_for_selector("#register-message")
    assert "FR14 2004 1010 0505 0001 3M02 606" in page.inner_text("#supplier-ibans")
    history = " ".join(page.inner_text("#supplier-history").split())
    assert "Changed: IBAN FR14 2004 1010 0505 0001 3M02 606" in history and "alice" in history
    audit(page, "supplier-detail")

    page.fill("#id_ibans", "DE00 1234")  # refused in words, nothing changed
    page.click("#supplier-edit button[type=submit]")
    page.wait_for_selector("#form-error")
    assert "is not valid" in page.inner_text("#form-error")
    audit(page, "supplier-edit-refused")

    page.goto("/suppliers/import")
    page.set_input_files("#import-file", files=[{"name": "bad.csv", "mimeType": "text/csv",
                                                  "buffer": b"name,currency\nA GmbH,EURO\n"}])
    page.click("#supplier-import button[type=submit]")
    page.wait_for_selector("#import-errors")
    assert "line 2: the currency 'EURO'" in page.inner_text("#import-errors")
    audit(page, "supplier-import-refused")

    # The tenant's settings: its own tax ids and the currencies it pays in.
    page.goto("/suppliers/settings")
    page.fill("#id_own_tax_ids", "DE811907980")
    page.fill("#id_currencies", "gbp eur")
    page.click("#register-settings button[type=submit]")
    page.wait_for_selector("#register-message")
    assert page.input_value("#id_currencies") == "GBP EUR"
    assert page.get_attribute("#id_currencies", "aria-describedby") == "currencies-hint"
    audit(page, "register-settings")
