from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HistoryConfig(AppConfig):
    """History: what a finished game leaves behind -- records, statistics, ratings, replays,
    exports -- and the pages and API that read it.

    It depends on the games app and never the other way round: the games app announces a
    game's end (``games.signals.game_finished``) and offers its pages' after-game figures
    (``games.extensions``); this app plugs into both when it starts.
    """

    name = "history"
    verbose_name = _("History")

    def ready(self) -> None:
        """Connect the after-game bookkeeping and the pages' figures to the games app."""
        from games import extensions, signals
        from history import ratings, selectors, services

        signals.game_finished.connect(
            services.on_game_finished, dispatch_uid="history.services.on_game_finished"
        )
        extensions.provide(seat_ratings=ratings.ratings_for, results_table=selectors.results_table)
