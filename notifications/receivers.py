"""What the notifications app does when the games app says it is somebody's move."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.conf import settings

from games.models import Game
from notifications import services, tasks

logger = logging.getLogger(__name__)


def on_your_move(
    sender: Any, game: Game, user_ids: list[int], deadline: datetime | None = None, **_: Any
) -> None:
    """``games.signals.your_move`` (sent on commit): queue each person's push now and their
    mail digest a few minutes later (``CRISP_MAIL_DIGEST_DELAY_SECONDS``: the moves of those
    minutes share one mail). The work runs in Celery, never in the request; a failure to queue
    is logged and never reaches the player whose move it was."""
    if not services.notifies(game):
        return
    for user_id in user_ids:
        try:
            tasks.push_your_move.delay(user_id, game.pk)
            tasks.mail_digest.apply_async(
                (user_id,), countdown=settings.CRISP_MAIL_DIGEST_DELAY_SECONDS
            )
        except Exception:
            logger.exception("could not queue the notifications of game %s", game.pk)
