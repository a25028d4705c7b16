"""The currencies a tenant pays in, set in its register settings (each change in their history): an
invoice in another one is Alice's finding (to check, accepted with a reason), never a request to
the supplier; one on the tenant's list passes even where the default list would not; another
tenant keeps its own."""

from __future__ import annotations

from django.urls import reverse

from agent.inbox import acceptances, corrections
from agent.reading import findings
from suppliers import services
from suppliers.models import RegisterSettings
from tests.suppliers.conftest import may_change_register, text_invoice
from web import status


def shown(job) -> dict:
    job.refresh_from_db()
    return status.shown_result(job)


def in_rupees(**changes) -> bytes:
    return text_invoice(**changes).replace(b"Currency: EUR", b"Currency: INR").replace(b"Total due: EUR",
                                                                                        b"Total due: INR")


def test_the_settings_page_keeps_the_currencies_and_refuses_a_bad_code_changing_nothing(browser, alice):
    browser.force_login(may_change_register(alice))
    page = browser.get(reverse("register_settings")).content.decode()
    assert 'name="currencies"' in page and 'aria-describedby="currencies-hint"' in page
    saved = browser.post(reverse("register_settings"), {"own_tax_ids": "DE811907980", "currencies": "gbp, chf GBP"})
    assert saved.status_code == 303 and services.currencies(alice.tenant_id) == ["GBP", "CHF"]
    assert services.own_tax_ids(alice.tenant_id) == ["DE811907980"]
    refused = browser.post(reverse("register_settings"), {"own_tax_ids": "", "currencies": "EUR EURO"})
    assert refused.status_code == 400 and "&#x27;EURO&#x27; is not a three-letter ISO currency code" in (
        refused.content.decode())
    settings = RegisterSettings.objects.get(tenant_id=alice.tenant_id)
    assert (settings.currencies, settings.own_tax_ids) == ("GBP CHF", "DE811907980")
    page = browser.get(reverse("register_settings")).content.decode()
    assert "GBP CHF" in page
    # Every change in the settings' history, with who made it; saving the same again writes none.
    assert [(c.field, c.before, c.after, c.by_name) for c in services.settings_history(alice.tenant_id)] == [
        ("currencies", "", "GBP CHF", "alice"), ("own tax ids", "", "DE811907980", "alice")]
    assert "Currencies: none → GBP CHF" in page
    browser.post(reverse("register_settings"), {"own_tax_ids": "DE811907980", "currencies": "GBP CHF"})
    assert len(services.settings_history(alice.tenant_id)) == 2


def test_an_invoice_in_a_currency_the_tenant_does_not_pay_in_is_alices_finding_and_accepted(reviewed, alice, clock):
    services.set_currencies(tenant_id=alice.tenant_id, values=["GBP", "CHF"], by=services.By(), now=clock.now())
    job = reviewed(text_invoice())  # in EUR: on the default list, not on this tenant's
    result = shown(job)
    assert result["fields"]["currency"]["status"] == "to_check" and result["fields"]["currency"]["value"] == "EUR"
    (finding,) = findings.standing(result["findings"])
    assert finding["code"] == "currency_not_paid" and "EUR" in finding["words"]
    assert "To ask the supplier" not in result["draft"] and job.outcome != "ok"

    acceptances.accept(job_id=job.pk, tenant_id=alice.tenant_id, user=alice, reason="this supplier bills in EUR",
                       keys=[findings.key(finding)], now=clock.now())
    cleared = shown(job)["fields"]["currency"]
    assert cleared["status"] == "present" and "accepted by alice: this supplier bills in EUR" in cleared["detail"]
    job.refresh_from_db()
    assert job.outcome == "ok"


def test_a_currency_on_the_tenants_list_passes_where_the_default_list_would_not(reviewed, alice, clock):
    before = reviewed(in_rupees(number="INV-1"))
    assert shown(before)["fields"]["currency"]["status"] == "to_check"  # INR: not on the default list
    services.set_currencies(tenant_id=alice.tenant_id, values=["EUR", "INR"], by=services.By(), now=clock.now())
    job = reviewed(in_rupees(number="INV-2"))
    assert shown(job)["fields"]["currency"] == {**shown(job)["fields"]["currency"], "status": "present",
                                               "value": "INR"}
    assert "currency_not_paid" not in [f["code"] for f in shown(job)["findings"]]


def test_a_correction_is_checked_against_the_tenants_list(reviewed, alice, clock):
    services.set_currencies(tenant_id=alice.tenant_id, values=["GBP"], by=services.By(), now=clock.now())
    job = reviewed(text_invoice())
    corrections.correct(job_id=job.pk, tenant_id=alice.tenant_id, user=alice, field="currency", value="EUR",
                        now=clock.now())
    assert shown(job)["fields"]["currency"]["status"] == "to_check"  # still the tenant's rule, still Alice's
    corrections.correct(job_id=job.pk, tenant_id=alice.tenant_id, user=alice, field="currency", value="gbp",
                        now=clock.now())
    assert shown(job)["fields"]["currency"]["status"] == "present"


def test_another_tenants_list_is_never_applied(reviewed, alice, bob, clock):
    services.set_currencies(tenant_id=alice.tenant_id, values=["GBP"], by=services.By(), now=clock.now())
    theirs = reviewed(text_invoice(), user=bob)
    assert shown(theirs)["fields"]["currency"]["status"] == "present"
    assert services.currencies(bob.tenant_id) == []
