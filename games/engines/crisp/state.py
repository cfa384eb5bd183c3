"""Game and round state: plain data, copied on every change, exactly round-tripping to JSON.

The state is a tree of small mutable dataclasses, but *immutable by contract*: the public
functions in ``rules`` never touch their input; they ``clone()`` it and change the copy
(copy-on-apply).  Keeping the tree made of lists, ints and card-code strings makes a clone and
a JSON dump both cheap, which matters because the web layer persists every state.

Conventions used throughout:

* ``deck`` is top-first (``deck[0]`` is drawn next); ``pile`` is bottom-first (``pile[-1]`` is
  the top, the card a pile draw takes).  Turning the pile over (R7) is then ``deck = pile``.
* ``hands[seat]`` is ``[left, centre, right]`` (R1).
* All times are int milliseconds; every "until"/"closes_at" bound is inclusive (R18).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..base import LIVE, TURN_BASED, JsonSettings, check_pace, is_int
from ..base import move_ms as _move_ms
from .errors import BAD_SETTINGS, IllegalAction


@dataclass(frozen=True, slots=True)
class Settings(JsonSettings):
    """The host's lobby settings (section 10) plus the timer lengths.

    The timers are settings only so tests can shorten them; the product uses the defaults.
    ``pace`` is the platform's (issue 26): ``"turn_based"`` plays R28 -- every move's clock is
    ``turn_seconds`` (the draw clock ``draw_seconds`` must then be ``None``), there is no crisp
    window, no memorise period and no start delay (the properties below say so once, for the
    rules, the deadlines and the views).

    >>> Settings(target_score=50, draw_seconds=30, pile_draw=True).to_json()["draw_seconds"]
    30
    >>> Settings(target_score=0)
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: target_score must be a positive int
    """

    target_score: int = 100
    draw_seconds: int | None = None
    pile_draw: bool = False
    window_ms: int = 3000
    start_delay_ms: int = 2000
    memorise_ms: int = 5000
    between_rounds_ms: int = 8000
    pace: str = LIVE
    turn_seconds: int | None = None

    def __post_init__(self) -> None:
        check_pace(self.pace, self.turn_seconds, ("draw_seconds", self.draw_seconds))  # R28
        if not is_int(self.target_score) or self.target_score <= 0:
            raise IllegalAction(BAD_SETTINGS, "target_score must be a positive int")
        if self.draw_seconds is not None and (
            not is_int(self.draw_seconds) or self.draw_seconds <= 0
        ):
            raise IllegalAction(BAD_SETTINGS, "draw_seconds must be a positive int or None")
        if not isinstance(self.pile_draw, bool):
            raise IllegalAction(BAD_SETTINGS, "pile_draw must be a bool")
        for name in ("window_ms", "start_delay_ms", "memorise_ms", "between_rounds_ms"):
            v = getattr(self, name)
            if not is_int(v) or v < 0:
                raise IllegalAction(BAD_SETTINGS, f"{name} must be an int >= 0")
        if self.start_delay_ms > self.window_ms:
            # Section 10: the next player may start *inside* the window (2 s of 3 s).
            raise IllegalAction(BAD_SETTINGS, "start_delay_ms may not exceed window_ms")

    @property
    def turn_based(self) -> bool:
        """R28: the call is the last step of a turn, not a window."""
        return self.pace == TURN_BASED

    @property
    def move_ms(self) -> int | None:
        """The clock of one move (a draw with its play, or R28's "Call crisp?"), or ``None``
        for no limit: ``turn_seconds`` in a turn-based game, else ``draw_seconds``."""
        return _move_ms(self.pace, self.turn_seconds, self.draw_seconds)

    @property
    def memorise_period(self) -> int:
        """Ms from the deal to the first turn: none in a turn-based game (R28: play does not
        wait; each seat's look waits for that seat instead)."""
        return 0 if self.pace == TURN_BASED else self.memorise_ms

    @property
    def start_delay(self) -> int:
        """Ms from a turn's end to the next turn's first draw: the live window's overlap; none
        in a turn-based game (R28: the next turn starts when you answer)."""
        return 0 if self.pace == TURN_BASED else self.start_delay_ms


@dataclass(slots=True)
class Turn:
    """The turn under way or about to begin.

    ``phase`` is what the turn awaits: ``"start"`` (a time: the memorise period or the start
    delay), ``"draw"`` (the seat must draw), ``"play"`` (the seat holds ``held``) or, in a
    turn-based game only, ``"call"`` (R28: its last card is played; it must answer "Call
    crisp?", its clock running from ``clock_from``).
    ``draw_no`` counts the turn's draws (1 = the normal draw, 2+ = King extra draws);
    ``clock_from`` is when the current draw's clock started (R10, R23).
    """

    no: int
    seat: int
    phase: str
    start_at: int
    final: bool = False
    begun: bool = False
    draw_no: int = 1
    clock_from: int | None = None
    extra_draws: int = 0
    held: str | None = None
    held_from: str | None = None
    # Kings played this turn whose effect is not over yet, innermost last, each with the number
    # of extra draws that were still due before it (section 5: used, then discarded).
    kings: list[list[Any]] = field(default_factory=list)

    def clone(self) -> Turn:
        return Turn(
            self.no,
            self.seat,
            self.phase,
            self.start_at,
            self.final,
            self.begun,
            self.draw_no,
            self.clock_from,
            self.extra_draws,
            self.held,
            self.held_from,
            [k[:] for k in self.kings],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "no": self.no,
            "seat": self.seat,
            "phase": self.phase,
            "start_at": self.start_at,
            "final": self.final,
            "begun": self.begun,
            "draw_no": self.draw_no,
            "clock_from": self.clock_from,
            "extra_draws": self.extra_draws,
            "held": self.held,
            "held_from": self.held_from,
            "kings": [k[:] for k in self.kings],
        }


@dataclass(slots=True)
class Window:
    """An open crisp window: ``seat`` may call until ``closes_at`` inclusive (section 10)."""

    seat: int
    turn_no: int
    opened_at: int
    closes_at: int

    def clone(self) -> Window:
        return Window(self.seat, self.turn_no, self.opened_at, self.closes_at)


@dataclass(slots=True)
class Round:
    """One deal, from the deal to the reveal."""

    number: int
    dealer: int
    dealt_at: int
    deck_order: list[str]  # the 52 cards as dealt; replay material, never shown
    deck: list[str]
    pile: list[str]
    hands: list[list[str]]
    looked: list[bool]  # opening look taken (R3)
    begun: list[bool]  # the seat's first turn has begun: no opening look any more (R16)
    last_end: list[list[Any] | None]  # per seat [at, "played"|"timeout"] of its latest turn
    turn: Turn | None
    turns_taken: int = 0
    windows: list[Window] = field(default_factory=list)
    caller: int | None = None
    called_at: int | None = None
    finals_done: list[int] = field(default_factory=list)
    turnovers: int = 0
    reveal: dict[str, Any] | None = None
    next_round_at: int | None = None

    def clone(self) -> Round:
        return Round(
            number=self.number,
            dealer=self.dealer,
            dealt_at=self.dealt_at,
            deck_order=self.deck_order,  # never mutated after the deal: shared safely
            deck=self.deck[:],
            pile=self.pile[:],
            hands=[h[:] for h in self.hands],
            looked=self.looked[:],
            begun=self.begun[:],
            last_end=[e[:] if e is not None else None for e in self.last_end],
            turn=self.turn.clone() if self.turn is not None else None,
            turns_taken=self.turns_taken,
            windows=[w.clone() for w in self.windows],
            caller=self.caller,
            called_at=self.called_at,
            finals_done=self.finals_done[:],
            turnovers=self.turnovers,
            reveal=_copy_reveal(self.reveal),
            next_round_at=self.next_round_at,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "dealer": self.dealer,
            "dealt_at": self.dealt_at,
            "deck_order": list(self.deck_order),
            "deck": self.deck[:],
            "pile": self.pile[:],
            "hands": [h[:] for h in self.hands],
            "looked": self.looked[:],
            "begun": self.begun[:],
            "last_end": [e[:] if e is not None else None for e in self.last_end],
            "turn": self.turn.to_json() if self.turn is not None else None,
            "turns_taken": self.turns_taken,
            "windows": [
                {
                    "seat": w.seat,
                    "turn_no": w.turn_no,
                    "opened_at": w.opened_at,
                    "closes_at": w.closes_at,
                }
                for w in self.windows
            ],
            "caller": self.caller,
            "called_at": self.called_at,
            "finals_done": self.finals_done[:],
            "turnovers": self.turnovers,
            "reveal": _copy_reveal(self.reveal),
            "next_round_at": self.next_round_at,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Round:
        return cls(
            number=d["number"],
            dealer=d["dealer"],
            dealt_at=d["dealt_at"],
            deck_order=list(d["deck_order"]),
            deck=list(d["deck"]),
            pile=list(d["pile"]),
            hands=[list(h) for h in d["hands"]],
            looked=list(d["looked"]),
            begun=list(d["begun"]),
            last_end=[list(e) if e is not None else None for e in d["last_end"]],
            turn=_turn_from_json(d["turn"]) if d["turn"] is not None else None,
            turns_taken=d["turns_taken"],
            windows=[Window(**w) for w in d["windows"]],
            caller=d["caller"],
            called_at=d["called_at"],
            finals_done=list(d["finals_done"]),
            turnovers=d["turnovers"],
            reveal=_copy_reveal(d["reveal"]),
            next_round_at=d["next_round_at"],
        )


def _turn_from_json(d: dict[str, Any]) -> Turn:
    t = Turn(**d)
    t.kings = [list(k) for k in t.kings]
    return t


def _copy_reveal(rv: dict[str, Any] | None) -> dict[str, Any] | None:
    if rv is None:
        return None
    return {k: (v[:] if isinstance(v, list) else v) for k, v in rv.items()}


@dataclass(slots=True)
class GameState:
    """A whole game: settings, running scores and the current round.

    Read by the web layer: ``status``, ``round_number``, ``scores``, ``winners``, ``seats``.
    ``seed`` and the decks are secrets: no view ever contains them.
    """

    seats: int
    settings: Settings
    seed: str
    decks: list[list[str]] | None
    first_dealer: int
    status: str  # "playing" | "finished"
    scores: list[int]
    history: list[list[int]]  # each finished round's scores, by seat
    winners: list[int]
    round: Round
    clock: int  # the last instant the state has taken into account

    @property
    def round_number(self) -> int:
        return self.round.number

    def clone(self) -> GameState:
        return GameState(
            seats=self.seats,
            settings=self.settings,
            seed=self.seed,
            decks=self.decks,  # never mutated: shared safely
            first_dealer=self.first_dealer,
            status=self.status,
            scores=self.scores[:],
            history=[h[:] for h in self.history],
            winners=self.winners[:],
            round=self.round.clone(),
            clock=self.clock,
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict (lists, ints, strings, bools, None only) for storage."""
        return {
            "version": 1,
            "seats": self.seats,
            "settings": self.settings.to_json(),
            "seed": self.seed,
            "decks": [list(d) for d in self.decks] if self.decks is not None else None,
            "first_dealer": self.first_dealer,
            "status": self.status,
            "scores": self.scores[:],
            "history": [h[:] for h in self.history],
            "winners": self.winners[:],
            "round": self.round.to_json(),
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
            decks=[list(x) for x in d["decks"]] if d["decks"] is not None else None,
            first_dealer=d["first_dealer"],
            status=d["status"],
            scores=list(d["scores"]),
            history=[list(h) for h in d["history"]],
            winners=list(d["winners"]),
            round=Round.from_json(d["round"]),
            clock=d["clock"],
        )
