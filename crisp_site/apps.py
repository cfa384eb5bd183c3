from django.apps import AppConfig


class CrispSiteConfig(AppConfig):
    """Registers the project package so its templates and tasks are discovered."""

    name = "crisp_site"
    verbose_name = "Crisp online"

    def ready(self) -> None:
        # Django's JSON columns (the game's state snapshot, written on every change and read
        # by every action's lock) through orjson where provably the same (crisp_site.fastjson):
        # psycopg's own `set_json_dumps`/`set_json_loads` never reach them.
        from crisp_site import fastjson

        fastjson.install_django()
