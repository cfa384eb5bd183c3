"""Issue 26, "your move, everywhere": the games awaiting a person, read from their seats.

The commit step stores who each game awaits on the seats themselves (``Seat.turn_since``,
``Seat.turn_deadline``: ``services.commit._persist_turns``), so a person's list is one indexed
query over their own seats -- never a parse of every game's secret state -- and the header's
count is a ``COUNT`` of the same rows.  What is listed is public: a game, its players' names,
since when and until when the table waits for you.  No card, no role.

Used by the "Your move" page, the header count (``context_processor``), the API
(``GET /api/v1/me/turns/``, with its long poll) and the per-user socket (``/ws/me/``).
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import F, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.functional import cached_property
from django.utils.translation import gettext as _

from games.engines import engine_for
from games.models import Game, Seat

#: The longest a long poll may wait (``?wait=``), in seconds.
MAX_WAIT_SECONDS = 60


def awaiting_seats(user: AbstractBaseUser) -> QuerySet[Seat]:
    """The person's seats whose move it is, in games in progress that they still play.

    A seat a computer sits in for, or one its person left, is not theirs to move (the commit
    step also clears those columns at the game's next change)."""
    return Seat.objects.filter(
        user=user,
        turn_since__isnull=False,
        sitting_in=False,
        left_at__isnull=True,
        game__status=Game.Status.PLAYING,
    )


def turn_count(user: AbstractBaseUser | None) -> int:
    """How many games await the person (0 for anyone not signed in): one ``COUNT``."""
    if user is None or not getattr(user, "is_authenticated", False):
        return 0
    return awaiting_seats(user).count()


def _name(user: Any) -> str:
    return getattr(user, "public_name", None) or user.get_username()


def game_title(game: Game) -> str:
    """The game's name as the lobby shows it: the host's name for it, else "<host>'s table"."""
    return game.name or _("%(host)s's table") % {"host": _name(game.host)}


def turn_list(user: AbstractBaseUser | None) -> list[dict[str, Any]]:
    """Every game awaiting the person, soonest deadline first (no deadline last, then the
    longest waiting first): the page and the API list the same.  Two queries: the seats with
    their games and hosts, then the other seats of those games (the opponents)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return []
    seats = list(
        awaiting_seats(user)
        .select_related("game", "game__host")
        .order_by(F("turn_deadline").asc(nulls_last=True), "turn_since", "game_id")
    )
    others: dict[int, list[Seat]] = {}
    for other in (
        Seat.objects.filter(game_id__in=[s.game_id for s in seats])
        .exclude(user=user)
        .select_related("user")
        .order_by("game_id", "number")
    ):
        others.setdefault(other.game_id, []).append(other)
    out = []
    for seat in seats:
        game = seat.game
        out.append(
            {
                "game": game.pk,
                "kind": game.kind,
                "kind_name": engine_for(game.kind).NAME,
                "name": game_title(game),
                "url": reverse("games:table", args=[game.pk]),
                "seat": seat.number,
                "since": seat.turn_since,
                "deadline": seat.turn_deadline,
                "pace": (game.settings or {}).get("pace", "live"),
                "opponents": [
                    {
                        "name": _name(o.user),
                        "bot": bool(getattr(o.user, "is_bot", False)),
                    }
                    for o in others.get(game.pk, [])
                ],
            }
        )
    return out


def etag(items: list[dict[str, Any]]) -> str:
    """A short token that changes whenever the list does (which games, since and until when):
    a client sends it back (``?since=`` or ``If-None-Match``) to wait for the next change."""
    parts = [
        f"{t['game']}:{_stamp(t['since'])}:{_stamp(t['deadline'])}"
        for t in sorted(items, key=lambda t: t["game"])
    ]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _stamp(value: datetime | None) -> str:
    return value.isoformat() if value is not None else "-"


def payload(items: list[dict[str, Any]], request: HttpRequest | None = None) -> dict[str, Any]:
    """The list as the API answers it (JSON): ``{"count", "etag", "turns": [...]}``."""
    turns = []
    for t in items:
        url = t["url"]
        turns.append(
            {
                "game": t["game"],
                "kind": t["kind"],
                "name": t["name"],
                "url": request.build_absolute_uri(url) if request is not None else url,
                "seat": t["seat"],
                "since": _stamp(t["since"]),
                "deadline": t["deadline"].isoformat() if t["deadline"] is not None else None,
                "pace": t["pace"],
                "opponents": t["opponents"],
            }
        )
    return {"count": len(turns), "etag": etag(items), "turns": turns}


class _YourMove:
    """The header's count, read once per page and only if the page shows it."""

    def __init__(self, request: HttpRequest) -> None:
        self._request = request

    @cached_property
    def count(self) -> int:
        return turn_count(getattr(self._request, "user", None))


def context_processor(request: HttpRequest) -> dict[str, Any]:
    """``your_move.count`` in every template (the header's "Your move (n)"): one ``COUNT``,
    run only when a template reads it (settings ``TEMPLATES`` registers this)."""
    return {"your_move": _YourMove(request)}
