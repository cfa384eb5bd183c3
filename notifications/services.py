"""The notifications' work: who is awaited where, the "your move" mail digest, Web Push, the
unsubscribe link and the push subscriptions.

Why a digest: a turn-based game moves a few times a day, and a person may have several going.
One mail lists every game where it is (still) their move, a few minutes after the first move
that made it so (``CRISP_MAIL_DIGEST_DELAY_SECONDS``), and never lists a game again to the same
person within an hour (``CRISP_MAIL_GAME_INTERVAL_SECONDS``): ``MailSent`` is that log.

Why only turn-based games (``CRISP_NOTIFY_PACES``): in a live game the players are at the
table, with a clock of seconds; a mail or a push would arrive after the move was due.

What a notification carries: whose move it is (the receiver's), in which game (its title, the
host's name for it, and its address) and until when -- never a card, a hand, a score or a role.
Everything here reads the game through its engine's public ``awaiting``, which is the same for
every viewer.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext

from games import clock
from games.engines import engine_for
from games.models import Game, Seat
from notifications.models import MailSent, NotificationSettings, PushSubscription

logger = logging.getLogger(__name__)

UNSUBSCRIBE_SALT = "notifications.unsubscribe"


# --- Who is awaited ---------------------------------------------------------------------------
def notifies(game: Game) -> bool:
    """Whether a game's moves are told by mail and push: its pace is one of
    ``CRISP_NOTIFY_PACES`` (turn-based only, by default: a live game's players are at the table)."""
    pace = (game.settings or {}).get("pace", "live")
    return pace in settings.CRISP_NOTIFY_PACES


def awaited_deadline(game: Game, user_id: int, now: int | None = None) -> tuple[bool, int | None]:
    """Whether it is ``user_id``'s move at ``game`` now (a seat of theirs the engine's public
    ``awaiting`` names, the game in play, no computer sitting in for them) and the instant (ms)
    their move times out. Read when a notification goes out, so a move made meanwhile cancels it."""
    if game.status != Game.Status.PLAYING or game.state is None:
        return False, None
    seats = [
        seat.number
        for seat in Seat.objects.filter(
            game=game, user_id=user_id, left_at__isnull=True, sitting_in=False
        )
    ]
    if not seats:
        return False, None
    engine = engine_for(game.kind)
    awaited = engine.awaiting(
        engine.GameState.from_json(game.state), clock.now_ms() if now is None else now
    )
    return any(s in awaited["seats"] for s in seats), awaited["deadline"]


def game_title(game: Game) -> str:
    """A game's name as the lobby shows it, in the active language: its kind, then the host's
    name for it or "<host>'s table" (nothing about its state)."""
    kind = gettext(engine_for(game.kind).NAME)
    name = game.name or gettext("%(host)s's table") % {"host": game.host.public_name}
    return f"{kind} · {name}"


def site_url(path: str) -> str:
    """An absolute address on the site (mails leave the site; ``CRISP_SITE_URL``)."""
    return settings.CRISP_SITE_URL.rstrip("/") + path


def game_path(game: Game) -> str:
    return reverse("games:table", args=[game.pk])


@dataclass(frozen=True)
class AwaitedGame:
    """A game where it is a person's move, as a notification shows it."""

    game: Game
    title: str
    url: str
    deadline: datetime | None


def games_awaiting(user_id: int, now: int | None = None) -> list[AwaitedGame]:
    """Every game that notifies where it is ``user_id``'s move now, soonest deadline first."""
    at = clock.now_ms() if now is None else now
    games = (
        Game.objects.filter(
            status=Game.Status.PLAYING,
            seats__user_id=user_id,
            seats__left_at__isnull=True,
            seats__sitting_in=False,
        )
        .select_related("host")
        .distinct()
    )
    out = []
    for game in games:
        if not notifies(game):
            continue
        awaited, deadline = awaited_deadline(game, user_id, at)
        if awaited:
            out.append(
                AwaitedGame(
                    game=game,
                    title=game_title(game),
                    url=site_url(game_path(game)),
                    deadline=clock.to_datetime(deadline) if deadline is not None else None,
                )
            )
    far = datetime.max.replace(tzinfo=UTC)
    return sorted(out, key=lambda a: (a.deadline or far, a.game.pk))


# --- The mail digest --------------------------------------------------------------------------
def mailable(user: Any) -> bool:
    """A person the digest may write to: an address, a real account (no guest, no computer)."""
    return bool(
        user.is_active and user.email and not user.is_guest and not getattr(user, "is_bot", False)
    )


def unsubscribe_token(user_id: int) -> str:
    """The signed token of a person's one-click unsubscribe link (no expiry: a link in an old
    mail must still work; it can do nothing but switch that person's mails off)."""
    return signing.Signer(salt=UNSUBSCRIBE_SALT).sign_object({"u": user_id})


def user_for_token(token: str) -> Any | None:
    """The person an unsubscribe token was made for, or None for a bad token."""
    try:
        data = signing.Signer(salt=UNSUBSCRIBE_SALT).unsign_object(token)
    except (signing.BadSignature, ValueError, TypeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("u"), int):
        return None
    return get_user_model().objects.filter(pk=data["u"]).first()


def unsubscribe_url(user_id: int) -> str:
    return site_url(reverse("notifications:unsubscribe", args=[unsubscribe_token(user_id)]))


def set_mail(user_id: int, on: bool) -> None:
    """Switch a person's "your move" mails on or off."""
    NotificationSettings.objects.update_or_create(user_id=user_id, defaults={"mail": on})


def send_digest(user_id: int) -> list[int]:
    """Mail ``user_id`` one "your move" digest listing every game where it is their move that
    no mail listed within the interval; the ids of the games mailed ([]: no mail sent).

    Two digests of one person never list the same game: the games are claimed (``MailSent``
    rows written) under a lock of the person's settings row, and the mail is sent after that
    commit (never holding a lock, on SQLite the database's one write lock, through SMTP); if
    sending fails the claim is withdrawn, so the next digest lists them again."""
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None or not mailable(user):
        return []
    if not NotificationSettings.for_user(user_id).mail:
        return []
    with translation.override(user.language or settings.LANGUAGE_CODE):
        awaited = games_awaiting(user_id)
        if not awaited:
            return []
        # The games' clock (``games.clock``), which their deadlines and moves are on: one clock
        # for "an hour since the last mail" and "a day per move".
        now = clock.now()
        since = now - timedelta(seconds=settings.CRISP_MAIL_GAME_INTERVAL_SECONDS)
        with transaction.atomic():
            row, _ = NotificationSettings.objects.get_or_create(user_id=user_id)
            row = NotificationSettings.objects.select_for_update().get(pk=row.pk)
            if not row.mail:
                return []
            recent = set(
                MailSent.objects.filter(
                    user_id=user_id, game__in=[a.game for a in awaited], sent_at__gte=since
                ).values_list("game_id", flat=True)
            )
            fresh = [a for a in awaited if a.game.pk not in recent]
            if not fresh:
                return []
            # The log only needs the last interval: older rows of this person go.
            MailSent.objects.filter(user_id=user_id, sent_at__lt=since).delete()
            claimed = MailSent.objects.bulk_create(
                [MailSent(user_id=user_id, game=a.game, sent_at=now) for a in fresh]
            )
        try:
            _digest_message(user, fresh).send()
        except Exception:
            MailSent.objects.filter(pk__in=[c.pk for c in claimed]).delete()
            raise
    return [a.game.pk for a in fresh]


def _digest_message(user: Any, games: list[AwaitedGame]) -> EmailMultiAlternatives:
    """The digest mail (text and HTML), in the active language, with RFC 8058's one-click
    unsubscribe headers."""
    now = clock.now()  # the games' clock, which their deadlines are on
    unsubscribe = unsubscribe_url(user.pk)
    context = {
        "user": user,
        "games": games,
        "now": now,
        "unsubscribe_url": unsubscribe,
        "settings_url": site_url(reverse("notifications:settings")),
        "site_url": site_url("/"),
    }
    subject = " ".join(render_to_string("notifications/digest_subject.txt", context).split())
    message = EmailMultiAlternatives(
        subject=subject,
        body=render_to_string("notifications/digest.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[user.email],
        headers={
            "List-Unsubscribe": f"<{unsubscribe}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        },
    )
    message.attach_alternative(render_to_string("notifications/digest.html", context), "text/html")
    return message


# --- Web Push ---------------------------------------------------------------------------------
def push_configured() -> bool:
    """Push is on when the site has its VAPID key pair (the environment's ``VAPID_*``)."""
    return bool(settings.VAPID_PUBLIC_KEY and settings.VAPID_PRIVATE_KEY)


def push_payload(game: Game) -> dict[str, str]:
    """What a "your move" push says, in the active language: the words "Your move", the game's
    title and its address -- nothing else."""
    return {"title": gettext("Your move"), "body": game_title(game), "url": game_path(game)}


def subscribe(user: Any, endpoint: str, p256dh: str, auth: str) -> PushSubscription:
    """Save a browser's subscription for ``user`` (a browser that subscribes again, or for
    another account, replaces its row: one endpoint is one browser)."""
    sub, _ = PushSubscription.objects.update_or_create(
        endpoint=endpoint,
        defaults={"user": user, "p256dh": p256dh, "auth": auth, "failures": 0},
    )
    return sub


def unsubscribe(user: Any, endpoint: str) -> bool:
    """Forget a browser's subscription of ``user``; whether there was one."""
    deleted, _ = PushSubscription.objects.filter(user=user, endpoint=endpoint).delete()
    return bool(deleted)


def push_your_move(user_id: int, game_id: int) -> int:
    """Push "your move" at ``game_id`` to every browser ``user_id`` subscribed; how many
    accepted it. Nothing when it is no longer their move, push is off for them or for the site.
    A subscription its push service answers 404 or 410 for is deleted (the browser dropped it);
    other failures are counted and logged, and ``MAX_FAILURES`` in a row delete it too."""
    if not push_configured():
        return 0
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    game = Game.objects.filter(pk=game_id).select_related("host").first()
    if user is None or game is None or not notifies(game):
        return 0
    if not NotificationSettings.for_user(user_id).push:
        return 0
    subscriptions = list(PushSubscription.objects.filter(user_id=user_id))
    if not subscriptions or not awaited_deadline(game, user_id)[0]:
        return 0
    with translation.override(user.language or settings.LANGUAGE_CODE):
        data = json.dumps(push_payload(game), ensure_ascii=False)
    delivered = 0
    for sub in subscriptions:
        if _push_one(sub, data):
            delivered += 1
    return delivered


def _push_one(sub: PushSubscription, data: str) -> bool:
    from py_vapid import Vapid
    from pywebpush import WebPushException, webpush

    try:
        webpush(
            sub.info(),
            data=data,
            vapid_private_key=Vapid.from_string(settings.VAPID_PRIVATE_KEY),
            vapid_claims={"sub": settings.VAPID_SUBJECT},
            ttl=settings.CRISP_PUSH_TTL_SECONDS,
            timeout=10,
        )
    except WebPushException as error:
        status = getattr(error.response, "status_code", None)
        if status in (404, 410):
            sub.delete()
            return False
        _failed(sub, f"status {status}")
        return False
    except Exception as error:  # the push service unreachable, a malformed key
        _failed(sub, type(error).__name__)
        return False
    PushSubscription.objects.filter(pk=sub.pk).update(last_ok_at=timezone.now(), failures=0)
    return True


def _failed(sub: PushSubscription, why: str) -> None:
    logger.warning("push to subscription %s failed: %s", sub.pk, why)
    sub.failures += 1
    if sub.failures >= PushSubscription.MAX_FAILURES:
        sub.delete()
    else:
        PushSubscription.objects.filter(pk=sub.pk).update(failures=sub.failures)
