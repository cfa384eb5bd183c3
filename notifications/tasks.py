"""The Celery tasks of the notifications: each asks ``notifications.services`` (thin)."""

from __future__ import annotations

from celery import shared_task

from notifications import services


@shared_task(name="notifications.mail_digest", ignore_result=True)
def mail_digest(user_id: int) -> None:
    """Send a person's "your move" digest, if any game still waits for them."""
    services.send_digest(user_id)


@shared_task(name="notifications.push_your_move", ignore_result=True)
def push_your_move(user_id: int, game_id: int) -> None:
    """Push "your move" at a game to a person's subscribed browsers."""
    services.push_your_move(user_id, game_id)
