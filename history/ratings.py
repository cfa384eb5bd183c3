"""Ratings: openskill's Plackett-Luce model, one rating per player and kind of game.

Why these choices:

* **openskill, Plackett-Luce** -- a maintained Bayesian rating library for free-for-all games of
  any size (2 to 8 seats here); each game is one ranking of its players.  We never do the
  mathematics ourselves: ``PlackettLuce().rate(teams, ranks=...)`` does it, teams of one.
* **Shown with uncertainty** -- ``mu`` (skill estimate), ``sigma`` (its uncertainty) and the
  ``ordinal`` ``mu - 3 sigma`` (openskill's conservative estimate, what leaderboards sort by).
  A rating is **provisional** until ``HISTORY_PROVISIONAL_GAMES`` rated games (default 5).
* **When** -- inside the game's finishing transaction (``history.services.game_record_finish``,
  on the ``games.signals.game_finished`` the service layer sends under the game's row lock),
  not in a Celery task after commit: the rating is part of the game's result, so it commits or
  rolls back with it and no outbox or retry machinery is needed for "exactly once"; the work is
  a few rows and microseconds of arithmetic.  The once-per-game ``GameRecord`` row (unique per
  game) makes a second run of the finishing path a no-op.
* **Order** -- the players' ``Rating`` rows are locked (``SELECT … FOR UPDATE``, by user id)
  *before* the game's record is inserted, so two games sharing a player are rated one after the
  other and their records' ids follow that order; ``ratings_recompute`` replays the records in
  id order and gets the same numbers (games with no player in common commute).
* **Who counts** -- ``game_is_rated``: only finished games (abandoned ones never change a
  rating), with at least two seats and no bot.  Bots are unrated: a game with a bot seat changes
  nobody's rating (a bot's strength is a setting, not a skill to estimate, and farming a weak
  bot must not lift a human): a computer player's account carries ``is_bot``
  (``seat_is_bot``).  A person's seat that a computer sat in for while they were away stays
  the person's: the game is rated (they were responsible for the seat).
  Guests (issue 24) are unrated the same way: a game with a guest's seat changes nobody's
  rating (``guest_seat``) -- a guest is one click to make, so rating them, or rating others
  against them, would let anybody farm points off throwaway accounts -- and a guest is never on
  a leaderboard. A guest who signs up starts rating from their next game.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import QuerySet
from django.utils import timezone
from openskill.models import PlackettLuce

from history.models import GameRecord, Rating

__all__ = [
    "game_is_rated",
    "leaderboard",
    "provisional_games",
    "rating_payload",
    "ratings_apply",
    "ratings_for",
    "ratings_recompute",
    "seat_is_bot",
    "seat_is_guest",
]


@cache
def _model() -> PlackettLuce:
    """The one rating model (openskill's defaults: mu 25, sigma 25/3)."""
    return PlackettLuce()


def provisional_games() -> int:
    """How many rated games a rating needs before it is established (and on leaderboards)."""
    return int(getattr(settings, "HISTORY_PROVISIONAL_GAMES", 5))


def seat_is_bot(seat: Any) -> bool:
    """Whether a seat is a computer player's (its account ``is_bot``)."""
    return bool(getattr(seat.user, "is_bot", False))


def seat_is_guest(seat: Any) -> bool:
    """Whether a seat is a guest's (its account ``is_guest``, accounts.models.User)."""
    return bool(getattr(seat.user, "is_guest", False))


#: Reasons a game went unrated that were facts of the moment it finished, not of today's
#: accounts: a guest who signs up later keeps the same account (same id), so deciding again from
#: ``is_guest`` would rate, on a recompute, the games they played as a guest.
REASONS_FOR_GOOD = frozenset({"guest_seat"})


def game_is_rated(game: Any, seats: Sequence[Any]) -> tuple[bool, str]:
    """Whether a game changes ratings, and if not why (``abandoned``, ``too_few_players``,
    ``bot_seat``, ``guest_seat``)."""
    if game.status != "finished":
        return False, "abandoned"
    if len({s.user_id for s in seats}) < 2:
        return False, "too_few_players"
    if any(seat_is_bot(s) for s in seats):
        return False, "bot_seat"
    if any(seat_is_guest(s) for s in seats):
        return False, "guest_seat"
    return True, ""


def _ordinal(mu: float, sigma: float) -> float:
    return _model().rating(mu=mu, sigma=sigma).ordinal()


def _rate(before: Sequence[tuple[float, float]], placements: Sequence[int]) -> list[Any]:
    model = _model()
    teams = [[model.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
    return [team[0] for team in model.rate(teams, ranks=list(placements))]


def ratings_apply(
    *, kind: str, user_ids: Sequence[int], placements: Sequence[int]
) -> list[dict[str, Any]]:
    """Rate one game: lock the players' ratings (creating first ratings), update them, and say
    what changed (``[{user_id, before, after}]`` by seat).  Call inside the finishing
    transaction, before the game's record is inserted (see the module docstring on order)."""
    defaults = _model()
    Rating.objects.bulk_create(
        [
            Rating(
                user_id=u,
                kind=kind,
                mu=defaults.mu,
                sigma=defaults.sigma,
                ordinal=_ordinal(defaults.mu, defaults.sigma),
            )
            for u in user_ids
        ],
        ignore_conflicts=True,
    )
    rows = {
        r.user_id: r
        for r in Rating.objects.select_for_update()
        .filter(kind=kind, user_id__in=user_ids)
        .order_by("user_id")
    }
    before = [(rows[u].mu, rows[u].sigma) for u in user_ids]
    after = _rate(before, placements)
    now = timezone.now()
    changes = []
    for u, (mu0, sigma0), new in zip(user_ids, before, after, strict=True):
        r = rows[u]
        r.mu, r.sigma, r.ordinal = new.mu, new.sigma, new.ordinal()
        r.games += 1
        r.updated_at = now
        r.save(update_fields=["mu", "sigma", "ordinal", "games", "updated_at"])
        changes.append(
            {
                "user_id": u,
                "before": {"mu": mu0, "sigma": sigma0},
                "after": {"mu": new.mu, "sigma": new.sigma},
            }
        )
    return changes


def ratings_recompute(*, kind: str | None = None) -> int:
    """Every rating again from scratch: the rated records replayed in their order (id).

    Rewrites each record's ``ratings`` too.  Returns the number of games rated.  Run inside a
    transaction (the management command does).
    """
    records = GameRecord.objects.filter(rated=True).order_by("id")
    ratings = Rating.objects.all()
    if kind is not None:
        records, ratings = records.filter(kind=kind), ratings.filter(kind=kind)
    ratings.delete()
    count = 0
    for record in records.iterator():
        players = sorted(record.players, key=lambda p: p["seat"])
        record.ratings = ratings_apply(
            kind=record.kind,
            user_ids=[p["user_id"] for p in players],
            placements=[p["placement"] for p in players],
        )
        record.save(update_fields=["ratings"])
        count += 1
    return count


def rating_payload(rating: Rating | None) -> dict[str, Any] | None:
    """The public form of a rating (None: no rated game of that kind yet)."""
    if rating is None:
        return None
    return {
        "kind": rating.kind,
        "mu": round(rating.mu, 3),
        "sigma": round(rating.sigma, 3),
        "ordinal": round(rating.ordinal, 3),
        "games": rating.games,
        "provisional": rating.games < provisional_games(),
    }


def ratings_for(
    users: Iterable[AbstractBaseUser | int], kind: str
) -> dict[int, dict[str, Any] | None]:
    """Each user's rating of ``kind`` (None if unrated), by user id: one query.  For the lobby
    (``templates/history/_rating.html`` renders one)."""
    ids = [u if isinstance(u, int) else u.pk for u in users]
    found = {r.user_id: r for r in Rating.objects.filter(kind=kind, user_id__in=ids)}
    return {i: rating_payload(found.get(i)) for i in ids}


def leaderboard(*, kind: str, include_provisional: bool = False) -> QuerySet[Rating]:
    """The ratings of ``kind``, best first (ordinal, then more games, then earlier); without
    provisional ratings unless asked."""
    qs = Rating.objects.filter(kind=kind, user__is_guest=False).select_related("user")
    if not include_provisional:
        qs = qs.filter(games__gte=provisional_games())
    return qs.order_by("-ordinal", "-games", "user_id")
