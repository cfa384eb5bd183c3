"""Game and hand state: plain JSON-shaped data, copied on every change, round-tripping exactly.

Immutable by contract: the public functions in ``rules`` never touch their input; they
``clone()`` it and change the copy.  The tree holds only lists, dicts, ints, strings, bools and
``None``, so ``to_json`` is the state itself and ``from_json(to_json())`` is an exact copy.

What is secret in here (``views`` is the only place that decides what leaves): ``seed``,
``decks``, ``deck_order``, every hand, ``roles`` and ``memo`` until the hand's reveal.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from ..base import LIVE, JsonSettings, check_pace
from ..base import is_int as _is_int
from ..base import move_ms as _move_ms
from .errors import BAD_SETTINGS, IllegalAction

#: T22: the game is to 15 points.  Only tests change it.
TARGET_SCORE = 15


@dataclass(frozen=True, slots=True)
class Settings(JsonSettings):
    """The host's one lobby setting (T22: time per move) plus test-only extras.

    ``move_seconds`` is ``None`` (no limit) or a positive number of seconds (the lobby offers 30
    and 60, ``host.host_settings``); ``target_score`` is fixed at 15 by T22 and is a setting only
    so tests can play short games.

    ``pace`` and ``turn_seconds`` are the platform's pace (``games.engines.base``, issue 26): in a
    turn-based game every move has ``turn_seconds`` (``move_seconds`` is then null) and its
    timeout is the same rule as live (T24).

    >>> Settings(move_seconds=30).to_json()
    {'move_seconds': 30, 'target_score': 15, 'pace': 'live', 'turn_seconds': None}
    >>> Settings(pace="turn_based", turn_seconds=86400).move_ms
    86400000
    >>> Settings(move_seconds=30, pace="turn_based", turn_seconds=86400)
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: turn-based: move_seconds must be null
    >>> Settings.from_json({"move_seconds": "30"})
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: move_seconds must be a positive int or null
    """

    move_seconds: int | None = None
    target_score: int = TARGET_SCORE
    pace: str = LIVE
    turn_seconds: int | None = None

    def __post_init__(self) -> None:
        if self.move_seconds is not None and (
            not _is_int(self.move_seconds) or self.move_seconds <= 0
        ):
            raise IllegalAction(BAD_SETTINGS, "move_seconds must be a positive int or null")
        if not _is_int(self.target_score) or self.target_score <= 0:
            raise IllegalAction(BAD_SETTINGS, "target_score must be a positive int")
        check_pace(self.pace, self.turn_seconds, ("move_seconds", self.move_seconds))

    @property
    def move_ms(self) -> int | None:
        """Each move's time (ms), or ``None``: ``base.move_ms`` of this game's pace."""
        return _move_ms(self.pace, self.turn_seconds, self.move_seconds)


@dataclass(slots=True)
class Hand:
    """One deal and its play (the contract's "round").

    ``phase``: ``"declare"`` (a Double Stakes hand before its declaration, T9), ``"play"``, or
    ``"over"`` (only ever seen as the last hand of a finished game: otherwise the next hand is
    dealt at the instant this one ends, T26).  ``trick`` is the trick under way as
    ``[[seat, card], ...]`` in play order; ``tricks`` the completed ones, each
    ``{"no", "leader", "cards", "winner", "at"}``; ``taken`` the trick counts by seat.
    ``clock_from`` is when the awaited move became available (T23).
    """

    number: int
    dealer: int
    dealt_at: int
    deck_order: list[str]
    roles: list[str]
    hands: list[list[str]]
    ds_seat: int | None
    trumps: str | None
    memo: str | None
    phase: str
    leader: int
    turn: int | None
    clock_from: int
    trick: list[list[Any]]
    tricks: list[dict[str, Any]]
    taken: list[int]
    result: dict[str, Any] | None = None

    def clone(self) -> Hand:
        """A copy safe to change.  Completed tricks, the played ``[seat, card]`` pairs, the
        deck order and the result are never changed once made, so they are shared."""
        return Hand(
            number=self.number,
            dealer=self.dealer,
            dealt_at=self.dealt_at,
            deck_order=self.deck_order,
            roles=self.roles[:],
            hands=[h[:] for h in self.hands],
            ds_seat=self.ds_seat,
            trumps=self.trumps,
            memo=self.memo,
            phase=self.phase,
            leader=self.leader,
            turn=self.turn,
            clock_from=self.clock_from,
            trick=self.trick[:],
            tricks=self.tricks[:],
            taken=self.taken[:],
            result=self.result,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "dealer": self.dealer,
            "dealt_at": self.dealt_at,
            "deck_order": self.deck_order[:],
            "roles": self.roles[:],
            "hands": [h[:] for h in self.hands],
            "ds_seat": self.ds_seat,
            "trumps": self.trumps,
            "memo": self.memo,
            "phase": self.phase,
            "leader": self.leader,
            "turn": self.turn,
            "clock_from": self.clock_from,
            "trick": [p[:] for p in self.trick],
            "tricks": [_copy_trick(t) for t in self.tricks],
            "taken": self.taken[:],
            "result": copy.deepcopy(self.result),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Hand:
        return cls(
            number=d["number"],
            dealer=d["dealer"],
            dealt_at=d["dealt_at"],
            deck_order=list(d["deck_order"]),
            roles=list(d["roles"]),
            hands=[list(h) for h in d["hands"]],
            ds_seat=d["ds_seat"],
            trumps=d["trumps"],
            memo=d["memo"],
            phase=d["phase"],
            leader=d["leader"],
            turn=d["turn"],
            clock_from=d["clock_from"],
            trick=[list(p) for p in d["trick"]],
            tricks=[_copy_trick(t) for t in d["tricks"]],
            taken=list(d["taken"]),
            result=copy.deepcopy(d["result"]),
        )


def _copy_trick(t: dict[str, Any]) -> dict[str, Any]:
    return {**t, "cards": [list(p) for p in t["cards"]]}


@dataclass(slots=True)
class GameState:
    """A whole game: settings, running scores and the current hand.

    Read by the web layer: ``status``, ``round_number``, ``scores``, ``winners``, ``seats``.
    ``history`` holds each finished hand's points by seat; ``last_hand`` the full public result
    of the most recent finished hand (its reveal, T20), so a reconnecting client can show it.
    """

    seats: int
    settings: Settings
    seed: str
    decks: list[list[str]] | None
    first_dealer: int
    status: str
    scores: list[int]
    history: list[list[int]]
    winners: list[int]
    round: Hand
    last_hand: dict[str, Any] | None
    clock: int

    @property
    def round_number(self) -> int:
        return self.round.number

    def clone(self) -> GameState:
        """A copy safe to change (what ``rules`` does before every change)."""
        return GameState(
            seats=self.seats,
            settings=self.settings,
            seed=self.seed,
            decks=self.decks,  # never changed: shared
            first_dealer=self.first_dealer,
            status=self.status,
            scores=self.scores[:],
            history=[x[:] for x in self.history],
            winners=self.winners[:],
            round=self.round.clone(),
            last_hand=self.last_hand,  # a finished hand's result is never changed: shared
            clock=self.clock,
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict for storage; ``GameState.from_json`` restores it exactly."""
        return {
            "version": 1,
            "seats": self.seats,
            "settings": self.settings.to_json(),
            "seed": self.seed,
            "decks": copy.deepcopy(self.decks),
            "first_dealer": self.first_dealer,
            "status": self.status,
            "scores": self.scores[:],
            "history": copy.deepcopy(self.history),
            "winners": self.winners[:],
            "round": self.round.to_json(),
            "last_hand": copy.deepcopy(self.last_hand),
            "clock": self.clock,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GameState:
        if d.get("version") != 1:
            raise ValueError(f"unknown game state version {d.get('version')!r}")
        return cls(
            seats=d["seats"],
            settings=Settings.from_json(d["settings"]),
            seed=d["seed"],
            decks=copy.deepcopy(d["decks"]),
            first_dealer=d["first_dealer"],
            status=d["status"],
            scores=list(d["scores"]),
            history=copy.deepcopy(d["history"]),
            winners=list(d["winners"]),
            round=Hand.from_json(d["round"]),
            last_hand=copy.deepcopy(d["last_hand"]),
            clock=d["clock"],
        )
