"""What another app may add to the games app's pages without the games app importing it.

The lobby shows each seated player's rating and a finished game's table shows its results; both
come from the history app, which depends on this app and registers its providers here when it
starts (``history.apps.HistoryConfig.ready``).  Without a provider the pages simply leave the
figure out (no rating beside a name, no results table).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from games.models import Game

#: ``(user ids, kind) -> {user_id: rating payload or None}`` (one query per kind).
SeatRatings = Callable[[Iterable[int], str], dict[int, Any]]
#: ``(finished or abandoned game) -> its results table`` (``templates/history/_results.html``).
ResultsTable = Callable[["Game"], Any]

_seat_ratings: SeatRatings | None = None
_results_table: ResultsTable | None = None


def provide(*, seat_ratings: SeatRatings, results_table: ResultsTable) -> None:
    """Register the providers of the pages' after-game figures (called once, at start-up)."""
    global _seat_ratings, _results_table
    _seat_ratings, _results_table = seat_ratings, results_table


def seat_ratings(user_ids: Iterable[int], kind: str) -> dict[int, Any]:
    """Each of these players' rating of ``kind`` as the lobby shows it ({} without a provider)."""
    return _seat_ratings(user_ids, kind) if _seat_ratings is not None else {}


def results_table(game: Game) -> Any:
    """A game's round-by-round results for its table page (None without a provider)."""
    return _results_table(game) if _results_table is not None else None
