from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    """The model provider's budget: calls in flight at once on every host, and its 429's hold."""

    name = "providers"
    verbose_name = "Model provider"

    def ready(self) -> None:
        from jobs import kinds

        from . import conf, diagnostic

        conf.slots()  # a bad PROVIDER_SLOTS stops start-up with its name, not a worker later
        kinds.register(diagnostic.KIND)  # a diagnostic kind: a call in a slot, for the tests of the budget
