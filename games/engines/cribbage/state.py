"""Game and hand state: plain JSON-native data, copied on every change, round-tripping exactly.

The state is two small mutable dataclasses, *immutable by contract*: the public functions in
``rules`` never touch their input; they ``clone()`` it and change the copy.  Every field is a
JSON-native value (ints, strings, ``None``, lists and dicts of them), so ``to_json`` is a deep
copy and ``from_json`` its exact inverse -- the web layer persists every state.

Conventions:

* a round is one *hand* of cribbage (deal, lay-away, play, show), numbered from 1;
* ``deck`` is top first: ``deck[0:12]`` are dealt one at a time alternately, pone first (C4),
  ``deck[12]`` is the starter (CE3) and the rest is the stock, never shown to anyone (C30d);
* hands, discards and the crib are kept in hand order (C2, C29), so their order can never
  betray the deal order or who laid away which crib card (C30i);
* times are int milliseconds; a move's last on-time instant is inclusive (C27).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ..base import LIVE, JsonSettings, check_pace
from ..base import is_int as _is_int
from ..base import move_ms as _move_ms
from .errors import BAD_SETTINGS, IllegalAction

#: The game is to 121, fixed (section 2, C25).
TARGET = 121


def _copy(v: Any) -> Any:
    """Deep copy of JSON-native data (faster than ``copy.deepcopy`` and exact)."""
    if isinstance(v, list):
        return [_copy(x) for x in v]
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    return v


@dataclass(frozen=True, slots=True)
class Settings(JsonSettings):
    """The host's one lobby setting (C25: time per move) plus the test-only target.

    ``move_seconds`` is ``None`` (no limit) or the seconds per move; the host's menu offers
    30 and 60 (``host_settings``), any positive int is accepted here so tests can shorten it.
    ``target_score`` is 121 in the product (C25 fixes it; the host cannot change it) and exists
    only so tests can play whole games quickly.

    ``pace`` and ``turn_seconds`` are the platform's pace (``games.engines.base``, issue 26): in a
    turn-based game every move has ``turn_seconds`` (``move_seconds`` is then null) and its
    timeout is the same rule as live (C29).

    >>> Settings(move_seconds=30).to_json()
    {'move_seconds': 30, 'target_score': 121, 'pace': 'live', 'turn_seconds': None}
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
    target_score: int = TARGET
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
class Round:
    """One hand.

    ``phase``: ``"lay_away"`` (both seats choose their crib cards), ``"play"`` (pegging) or
    ``"over"`` (the game ended during this hand).  ``"show"`` exists only inside the call that
    scores the show: a hand shown in full is replaced at once by the next deal (C28), and one
    whose show ends the game becomes ``"over"``.
    """

    number: int
    dealer: int
    dealt_at: int
    deck: list[str]
    #: unplayed cards by seat, hand order
    hands: list[list[str]]
    #: the four cards each seat kept (for the show), set at its lay-away
    kept: list[list[str] | None]
    #: each seat's two crib cards, ``None`` until it has laid away
    discards: list[list[str] | None]
    phase: str = "lay_away"
    starter: str | None = None
    his_heels: bool = False
    #: cards played by each seat this hand, in order (C12: they stay in front of their player)
    played: list[list[str]] | None = None
    #: the current count: running total, ``[seat, card]`` since the last reset, go flags
    count: int = 0
    sequence: list[list[Any]] | None = None
    go: list[bool] | None = None
    #: whose move it is in the play, since when its clock runs, and the play-move number
    turn: int | None = None
    turn_since: int | None = None
    move_no: int = 0
    last_seat: int | None = None
    #: points this hand: from the play, and in all (heels + play + show)
    pegged: list[int] | None = None
    points: list[int] | None = None
    #: the show's items so far (see rules._show), in C20 order
    shows: list[dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        if self.played is None:
            self.played = [[], []]
        if self.sequence is None:
            self.sequence = []
        if self.go is None:
            self.go = [False, False]
        if self.pegged is None:
            self.pegged = [0, 0]
        if self.points is None:
            self.points = [0, 0]
        if self.shows is None:
            self.shows = []

    @property
    def pone(self) -> int:
        return 1 - self.dealer

    def clone(self) -> Round:
        """A copy the rules may change.  Values the rules only ever *replace* or *append to*
        are shared one level down (the deck, a sequence's ``[seat, card]`` pairs, a show's
        filed record), which keeps a clone cheap as the hand's records grow."""
        return Round(
            self.number,
            self.dealer,
            self.dealt_at,
            self.deck,
            [h[:] for h in self.hands],
            [None if k is None else k[:] for k in self.kept],
            [None if d is None else d[:] for d in self.discards],
            self.phase,
            self.starter,
            self.his_heels,
            [p[:] for p in self.played or ()],
            self.count,
            list(self.sequence or ()),
            list(self.go or ()),
            self.turn,
            self.turn_since,
            self.move_no,
            self.last_seat,
            list(self.pegged or ()),
            list(self.points or ()),
            list(self.shows or ()),
        )

    def to_json(self) -> dict[str, Any]:
        return {f.name: _copy(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Round:
        return cls(**{k: _copy(v) for k, v in d.items()})


@dataclass(slots=True)
class GameState:
    """The whole game.  ``scores`` are the front pegs, ``back_pegs`` where each front peg stood
    before its last move (a cribbage board's two pegs per player)."""

    settings: Settings
    seed: str
    decks: list[list[str]] | None
    #: the cut for the first deal (C3): ``[card of seat 0, card of seat 1]`` per attempt
    cuts: list[list[str]]
    first_dealer: int
    status: str
    scores: list[int]
    back_pegs: list[int]
    winners: list[int]
    #: points won by each seat, hand by hand (the finished hands and, at the end, the last)
    history: list[list[int]]
    #: the previous hand's public summary (its ``hand_over`` data), for tables that (re)join
    last_hand: dict[str, Any] | None
    round: Round
    clock: int

    seats: int = 2

    @property
    def round_number(self) -> int:
        return self.round.number

    def clone(self) -> GameState:
        """A copy the rules may change (copy-on-apply).  The explicit decks, the cut and
        the filed hand records are never changed in place once written, so they are shared;
        ``to_json`` always deep-copies."""
        return GameState(
            settings=self.settings,
            seed=self.seed,
            decks=self.decks,
            cuts=self.cuts,
            first_dealer=self.first_dealer,
            status=self.status,
            scores=list(self.scores),
            back_pegs=list(self.back_pegs),
            winners=list(self.winners),
            history=list(self.history),
            last_hand=self.last_hand,
            round=self.round.clone(),
            clock=self.clock,
            seats=self.seats,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "settings": self.settings.to_json(),
            "seed": self.seed,
            "decks": _copy(self.decks),
            "cuts": _copy(self.cuts),
            "first_dealer": self.first_dealer,
            "status": self.status,
            "scores": list(self.scores),
            "back_pegs": list(self.back_pegs),
            "winners": list(self.winners),
            "history": _copy(self.history),
            "last_hand": _copy(self.last_hand),
            "round": self.round.to_json(),
            "clock": self.clock,
            "seats": self.seats,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GameState:
        return cls(
            settings=Settings.from_json(d["settings"]),
            seed=d["seed"],
            decks=_copy(d["decks"]),
            cuts=_copy(d["cuts"]),
            first_dealer=d["first_dealer"],
            status=d["status"],
            scores=list(d["scores"]),
            back_pegs=list(d["back_pegs"]),
            winners=list(d["winners"]),
            history=_copy(d["history"]),
            last_hand=_copy(d["last_hand"]),
            round=Round.from_json(d["round"]),
            clock=d["clock"],
            seats=d["seats"],
        )
