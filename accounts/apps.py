from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Tenants, their members and their API tokens: who submits jobs, and for which tenant."""

    name = "accounts"
    verbose_name = "Accounts"
