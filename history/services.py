"""After a game finishes: its record, its players' statistics and ratings, exactly once.

``game_record_finish`` runs on the games app's ``game_finished`` signal (connected in
``history.apps.HistoryConfig.ready``), which the service layer sends in the transaction that
finishes a game (``_engine_change`` when the engine says "finished", ``game_end_now``), under
the game's row lock.  Everything it writes is derived from what the game stored (seats' scores,
winners, the engine events through the kind's ``stats`` hook), so ``records_recompute`` can
rebuild it all.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from games.engines.base import Event as EngineEvent
from games.models import Event, Game, Seat
from history import ratings
from history.hooks import hook
from history.models import GameRecord, PlayerStats

__all__ = [
    "combine_counters",
    "game_counters",
    "game_record_finish",
    "on_game_finished",
    "records_recompute",
]

logger = logging.getLogger(__name__)


def placements_of(kind: str, scores: Sequence[int], winners: Sequence[int]) -> list[int]:
    """Finishing places by seat (0 best, ties share): the kind's ``stats.placements`` hook, else
    the winners first and everyone else tied behind them."""
    stats = hook(kind, "stats")
    if stats is not None and hasattr(stats, "placements"):
        return [int(p) for p in stats.placements(list(scores), list(winners))]
    return [0 if seat in winners else 1 for seat in range(len(scores))]


def game_counters(game: Game, seats: int) -> list[dict[str, Any]]:
    """Each seat's statistics counters over the game's stored engine events ([] without a
    ``stats`` hook)."""
    stats = hook(game.kind, "stats")
    if stats is None:
        return []
    rows = Event.objects.filter(game=game, origin=Event.Origin.ENGINE).order_by("seq")
    events = [EngineEvent(t, d) for t, d in rows.values_list("type", "data")]
    return stats.seat_counters(events, seats)


def combine_counters(kind: str, total: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """Two sets of counters as one: summed, except keys the kind's ``stats.COMBINE`` says are
    a ``min`` or a ``max``."""
    stats = hook(kind, "stats")
    how = getattr(stats, "COMBINE", {}) if stats is not None else {}
    out = dict(total)
    for key, value in more.items():
        if key not in out or out[key] is None:
            out[key] = value
        elif value is None:
            continue
        elif how.get(key) == "min":
            out[key] = min(out[key], value)
        elif how.get(key) == "max":
            out[key] = max(out[key], value)
        else:
            out[key] = out[key] + value
    return out


def _record_fields(game: Game, seats: list[Seat]) -> dict[str, Any]:
    scores = [s.score for s in seats]
    winners = list(game.winners)
    places = placements_of(game.kind, scores, winners)
    return {
        "kind": game.kind,
        "finished_at": game.ended_at or timezone.now(),
        "players": [
            {
                "seat": s.number,
                "user_id": s.user_id,
                "score": s.score,
                "placement": places[s.number],
                "winner": s.number in winners,
            }
            for s in seats
        ],
        "counters": game_counters(game, len(seats)),
    }


def _stats_add(record: GameRecord) -> None:
    """Add one record to its players' cached sums.  Rows are locked (two games of one player
    finishing at once), in user-id order like the ratings, so two such games cannot deadlock."""
    for p in sorted(record.players, key=lambda p: p["user_id"]):
        PlayerStats.objects.get_or_create(user_id=p["user_id"], kind=record.kind)
        row = PlayerStats.objects.select_for_update().get(user_id=p["user_id"], kind=record.kind)
        row.games += 1
        row.wins += 1 if p["winner"] else 0
        if record.counters:
            row.counters = combine_counters(record.kind, row.counters, record.counters[p["seat"]])
        row.updated_at = timezone.now()
        row.save(update_fields=["games", "wins", "counters", "updated_at"])


def game_record_finish(*, game: Game) -> GameRecord | None:
    """File a finished game's record, add it to its players' statistics, rate it if it counts.

    Idempotent: a game that already has its record gets that record back and nothing changes
    (the finishing path may run twice).  Caller holds the game's row lock, inside the
    finishing transaction (see ``history.ratings`` for why it is not an after-commit task).

    A failure here (say a bug in a kind's stats hook) must not stop the game from finishing:
    it is logged, its writes are rolled back to a savepoint, and None is returned; the game has
    no record until ``manage.py history_recompute`` files it.
    """
    try:
        with transaction.atomic():
            return _record_finish(game)
    except Exception:
        logger.exception("could not file the record of game %s", game.pk)
        return None


def on_game_finished(sender: type, *, game: Game, **kwargs: Any) -> None:
    """``games.signals.game_finished``'s receiver: file the game's record in the finishing
    transaction, exactly as when the service layer called ``game_record_finish`` itself."""
    game_record_finish(game=game)


def _record_finish(game: Game) -> GameRecord:
    existing = GameRecord.objects.filter(game=game).first()
    if existing is not None:
        return existing
    seats = list(Seat.objects.filter(game=game).select_related("user").order_by("number"))
    fields = _record_fields(game, seats)
    rated, reason = ratings.game_is_rated(game, seats)
    changes: list[dict[str, Any]] = []
    if rated:
        changes = ratings.ratings_apply(
            kind=game.kind,
            user_ids=[p["user_id"] for p in fields["players"]],
            placements=[p["placement"] for p in fields["players"]],
        )
    record = GameRecord.objects.create(
        game=game, rated=rated, unrated_reason=reason, ratings=changes, **fields
    )
    _stats_add(record)
    return record


@transaction.atomic
def records_recompute() -> dict[str, int]:
    """Rebuild every record's contents, every player's statistics and every rating from the
    stored games and events.  Records keep their ids (the order games were rated in); a finished
    game without a record (e.g. finished before this feature) gets one, in finishing order."""
    counts = {"records": 0, "created": 0, "rated": 0}
    for record in GameRecord.objects.select_related("game").order_by("id"):
        game = record.game
        seats = list(Seat.objects.filter(game=game).select_related("user").order_by("number"))
        for key, value in _record_fields(game, seats).items():
            setattr(record, key, value)
        if record.unrated_reason not in ratings.REASONS_FOR_GOOD:
            record.rated, record.unrated_reason = ratings.game_is_rated(game, seats)
        record.ratings = []
        record.save()
        counts["records"] += 1
    missing = Game.objects.filter(status=Game.Status.FINISHED, record__isnull=True)
    for game in missing.order_by("ended_at", "pk"):
        seats = list(Seat.objects.filter(game=game).select_related("user").order_by("number"))
        rated, reason = ratings.game_is_rated(game, seats)
        GameRecord.objects.create(
            game=game, rated=rated, unrated_reason=reason, **_record_fields(game, seats)
        )
        counts["created"] += 1
        counts["records"] += 1
    counts["rated"] = ratings.ratings_recompute()
    PlayerStats.objects.all().delete()
    for record in GameRecord.objects.order_by("id").iterator():
        _stats_add(record)
    return counts
