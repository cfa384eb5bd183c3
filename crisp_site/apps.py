from django.apps import AppConfig


class CrispSiteConfig(AppConfig):
    """Registers the project package so its templates and tasks are discovered."""

    name = "crisp_site"
    verbose_name = "Crisp online"
