from django.apps import AppConfig


class WebConfig(AppConfig):
    """The product's web app: the pages and the JSON API over the queue. It has no models."""

    name = "web"
    verbose_name = "Web"
