from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GamesConfig(AppConfig):
    """Games: lobby, play, persistence, timers and live updates around the pure rules engine."""

    name = "games"
    verbose_name = _("Games")
