from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class NotificationsConfig(AppConfig):
    """Notifications (issue 26): telling people it is their move when they are not at the
    table -- an e-mail digest and Web Push -- and the installable web app that receives pushes.

    It depends on the games app and never the other way round: the games app announces, on
    commit, whose move a change made it (``games.signals.your_move``); this app listens.
    """

    name = "notifications"
    verbose_name = _("Notifications")

    def ready(self) -> None:
        """Listen to the games app's "your move" announcement."""
        from games import signals
        from notifications import receivers

        signals.your_move.connect(
            receivers.on_your_move, dispatch_uid="notifications.receivers.on_your_move"
        )
