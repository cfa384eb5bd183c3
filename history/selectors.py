"""Reads for what happens after a game: players' histories, a game's rounds, statistics and
public profiles.  Kind-neutral: everything goes through the engine's interface (``GameState``'s
``scores``) and the optional ``stats`` hook (docs/ENGINE.md, "Optional hooks for history").

Nothing private leaves here: a profile has a player's public name, username, join date, games,
statistics and ratings -- never an email, a token or a private game the viewer did not sit at.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Count, Q, QuerySet
from django.utils.translation import gettext as _

from games.engines import KINDS, engine_for
from games.errors import ServiceError
from games.models import Game, Round
from history import ratings
from history.hooks import hook
from history.models import PlayerStats, Rating

__all__ = [
    "game_rounds",
    "history_row",
    "player_by_username",
    "player_games",
    "player_profile",
    "player_stats",
    "results_table",
]

_OVER = (Game.Status.FINISHED, Game.Status.ABANDONED)


def _name(user: Any) -> str:
    return getattr(user, "public_name", None) or user.get_username()


def player_by_username(username: str) -> AbstractBaseUser:
    """The active user of that username, or ``not_found`` (404)."""
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise ServiceError("not_found", "No such player.", status=404)
    return user


def _visible(qs: QuerySet[Game], viewer: AbstractBaseUser | None) -> QuerySet[Game]:
    """Public games, plus private ones the viewer sat at (all of them for staff)."""
    if getattr(viewer, "is_staff", False):
        return qs
    pk = getattr(viewer, "pk", None)
    mine = Game.objects.filter(seats__user_id=pk).values("pk") if pk is not None else []
    return qs.filter(Q(private=False) | Q(pk__in=mine))


def player_games(
    *, user: AbstractBaseUser, viewer: AbstractBaseUser | None, kind: str | None = None
) -> QuerySet[Game]:
    """The finished and abandoned games ``user`` sat at, newest first, that ``viewer`` may see
    (abandoned lobbies that never started are not games anyone played: left out)."""
    qs = Game.objects.filter(
        seats__user=user, status__in=_OVER, started_at__isnull=False
    ).prefetch_related("seats__user")
    if kind is not None:
        qs = qs.filter(kind=kind)
    return _visible(qs, viewer).order_by("-ended_at", "-pk")


def history_row(game: Game, user: AbstractBaseUser | None) -> dict[str, Any]:
    """One game as a history list shows it, from ``user``'s side (None: nobody's)."""
    seats = sorted(game.seats.all(), key=lambda s: s.number)
    you = next((s for s in seats if s.user_id == getattr(user, "pk", None)), None)
    if game.status == Game.Status.ABANDONED:
        result = "abandoned"
    elif you is None:
        result = "finished"
    else:
        result = "won" if you.number in game.winners else "lost"
    return {
        "id": game.pk,
        "kind": game.kind,
        "kind_name": engine_for(game.kind).NAME,
        "status": game.status,
        "ended_at": game.ended_at.isoformat() if game.ended_at else None,
        "players": [
            {
                "seat": s.number,
                "username": s.user.get_username(),
                "name": _name(s.user),
                "score": s.score,
                "winner": s.number in game.winners,
            }
            for s in seats
        ],
        "winners": list(game.winners),
        "result": result,
        "seat": you.number if you is not None else None,
    }


def game_rounds(game: Game) -> list[dict[str, Any]]:
    """The game's finished rounds: each round's scores by seat and the running totals after it.

    Kind-neutral: the totals are the engine's ``GameState.scores`` of the round's end snapshot
    (``Round.state``), else the ``scores`` of its end event (``Round.result``); a round's
    scores are the difference from the round before.  Nothing hidden is read out.
    """
    engine = engine_for(game.kind)
    out: list[dict[str, Any]] = []
    previous: list[int] | None = None
    rows = Round.objects.filter(game=game, result__isnull=False).order_by("number")
    for rnd in rows.only("number", "dealer", "state", "result", "started_at", "ended_at"):
        if rnd.state is not None:
            totals = list(engine.GameState.from_json(rnd.state).scores)
        else:
            totals = list((rnd.result or {}).get("scores") or [])
        if not totals:
            continue
        before = previous if previous is not None else [0] * len(totals)
        out.append(
            {
                "number": rnd.number,
                "dealer": rnd.dealer,
                "started_at": rnd.started_at.isoformat(),
                "ended_at": rnd.ended_at.isoformat() if rnd.ended_at else None,
                "round_scores": [t - b for t, b in zip(totals, before, strict=False)],
                "scores": totals,
            }
        )
        previous = totals
    return out


def results_table(game: Game) -> dict[str, Any]:
    """``game_rounds`` shaped for ``templates/history/_results.html``: the players' names and,
    per round, one cell per seat with the round's score and the running total."""
    seats = game.seats.select_related("user").order_by("number")
    return {
        "names": [_name(s.user) for s in seats],
        "rounds": [
            {
                "number": r["number"],
                "cells": [
                    {"score": score, "total": total}
                    for score, total in zip(r["round_scores"], r["scores"], strict=False)
                ],
            }
            for r in game_rounds(game)
        ],
    }


def _details(kind: str, counters: dict[str, Any]) -> list[dict[str, Any]]:
    """The kind's own statistics (its ``stats.summary``), labels translated."""
    stats = hook(kind, "stats")
    if stats is None:
        return []
    return [{**item, "label": _(item["label"])} for item in stats.summary(counters)]


def player_stats(
    *, user: AbstractBaseUser, viewer: AbstractBaseUser | None = None
) -> list[dict[str, Any]]:
    """Per kind the player has played: games, wins, win rate (finished games), abandoned games,
    and the kind's own figures (from the cached sums, ``PlayerStats``)."""
    cached = {s.kind: s for s in PlayerStats.objects.filter(user=user)}
    abandoned = dict(
        Game.objects.filter(
            seats__user=user, status=Game.Status.ABANDONED, started_at__isnull=False
        )
        .values_list("kind")
        .annotate(n=Count("pk"))
    )
    out = []
    for kind in KINDS:
        row = cached.get(kind)
        if row is None and not abandoned.get(kind):
            continue
        games = row.games if row else 0
        wins = row.wins if row else 0
        out.append(
            {
                "kind": kind,
                "kind_name": engine_for(kind).NAME,
                "games": games,
                "wins": wins,
                "win_rate": round(wins / games, 4) if games else None,
                "abandoned": abandoned.get(kind, 0),
                "details": _details(kind, row.counters if row else {}),
            }
        )
    return out


def player_profile(*, user: AbstractBaseUser, viewer: AbstractBaseUser | None) -> dict[str, Any]:
    """A player's public page: name, games, statistics and ratings (nothing private)."""
    found = {r.kind: r for r in Rating.objects.filter(user=user)}
    return {
        "username": user.get_username(),
        "name": _name(user),
        # A guest account (issue 24): its page says so; guests are never rated.
        "is_guest": bool(getattr(user, "is_guest", False)),
        "joined": user.date_joined.date().isoformat(),
        "stats": player_stats(user=user, viewer=viewer),
        "ratings": [
            {**ratings.rating_payload(found[k]), "kind_name": engine_for(k).NAME}
            for k in KINDS
            if k in found
        ],
    }
