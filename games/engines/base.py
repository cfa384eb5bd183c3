"""What every game engine shares: the value types ``Event``, ``Deadline``, ``IllegalAction``
and ``Awaiting``, and the plumbing the three engines used to copy (issue 23).

Standard library only, like the engines themselves.  The value types live here, once, because
the web layer stores, schedules and reports them without knowing which game produced them: an
``Event`` row, a Celery deadline and a ``{code, detail}`` refusal look the same for every kind.
The plumbing -- the ``Settings`` JSON round trip (``JsonSettings``), the host menu checked
against its own JSON Schema (``host_choices``), the seeded deck and its validation, the
``new_game`` preamble (``check_new_game``), the turn model (``awaiting``) and the final standing
(``placement_returns``) -- is here so that a rule of the platform is written once and an engine
keeps only its game.  Everything game-specific (the event types, the deadline kinds, the refusal
codes, the menus) stays in the game's own package.  The typed contract itself is
``games.engines.protocol.Engine``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

# Refusal codes every engine uses with the same meaning.  Games add their own.
BAD_ACTION = "bad_action"  # malformed wire action
BAD_SEAT = "bad_seat"  # seat number out of range
BAD_SETTINGS = "bad_settings"  # new_game / Settings arguments out of range
GAME_FINISHED = "game_finished"
NOT_YOUR_TURN = "not_your_turn"


class IllegalAction(ValueError):
    """An action the rules do not allow now; the state it was tried on is unchanged.

    ``code`` is stable and machine-readable (clients switch on it); ``reason`` is for people
    and never contains a card value or a role the actor may not see.

    >>> e = IllegalAction("pile_empty", "the discard pile is empty")
    >>> e.code, str(e)
    ('pile_empty', 'pile_empty: the discard pile is empty')
    """

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason

    def to_json(self) -> dict[str, str]:
        """The wire form of a refusal."""
        return {"code": self.code, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened.  ``data`` is full and unredacted (admins, storage, replay);
    clients only ever receive the game's ``event_view(event, seat)``.  Every ``data`` has
    ``"at"``, the instant (ms) it happened."""

    type: str
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "data": self.data}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Event:
        return cls(d["type"], d["data"])


@dataclass(frozen=True, slots=True)
class Deadline:
    """A scheduled consequence.  ``key`` is unique over the game and names the round, turn and
    move it belongs to, so a stale timer (its turn already over) is recognisably stale; ``at``
    is the first instant (ms) at which it has taken effect (docs/ENGINE.md, "Time")."""

    key: str
    kind: str
    at: int

    def to_json(self) -> dict[str, object]:
        return {"key": self.key, "kind": self.kind, "at": self.at}


class Timers:
    """The half of ``fire`` / ``advance`` every engine shares: due deadlines take effect one by
    one, earliest first, each at its own instant, on a clone (the given state never changes).

    Each game supplies only its own two rules: ``pending(state)`` (its deadlines, earliest
    first) and ``apply_one(state, deadline, events)`` (what one deadline does).  Applying one may
    create another already due (a timeout lets the next move's clock start at that instant), so
    the loop asks again after each; a late sweep therefore gives the punctual result.  The
    state's ``clock`` moves to each deadline's instant before it applies, so nothing it does can
    be dated earlier.  The state type needs ``clone()`` and an int ``clock``.

    >>> from types import SimpleNamespace as NS
    >>> class S(NS):
    ...     def clone(self): return S(clock=self.clock, due=list(self.due), done=list(self.done))
    >>> def pending(s): return [Deadline(f"d{at}", "tick", at) for at in s.due]
    >>> def apply_one(s, d, events):
    ...     s.due.remove(d.at); s.done.append(d.at); events.append(Event("tick", {"at": d.at}))
    >>> timers = Timers(pending, apply_one)
    >>> s = S(clock=0, due=[5, 9], done=[])
    >>> t, ev = timers.fire(s, "d9", 10)
    >>> t.done, [e.data["at"] for e in ev], s.done, t.clock
    ([5, 9], [5, 9], [], 9)
    >>> timers.fire(s, "d9", 8) == (s, []), timers.fire(s, "gone", 99) == (s, [])
    (True, True)
    >>> timers.advance(s, 6)[0].done, timers.advanced(s, 4) is s
    ([5], True)
    """

    __slots__ = ("_apply_one", "_pending")

    def __init__(self, pending: Any, apply_one: Any) -> None:
        self._pending = pending
        self._apply_one = apply_one

    def fire(self, state: Any, key: str, now: int) -> tuple[Any, list[Event]]:
        """Deliver the timer for deadline ``key`` at ``now``: if it is pending and due, every
        deadline up to its instant takes effect; a stale or early key changes nothing (the same
        state and ``[]``)."""
        for d in self._pending(state):
            if d.key == key:
                if d.at > now:
                    return state, []
                return self._run_on_clone(state, d.at)
        return state, []

    def advance(self, state: Any, now: int) -> tuple[Any, list[Event]]:
        """Every pending deadline with ``at <= now``, in order (the sweep); the same object and
        ``[]`` when nothing was due."""
        ds = self._pending(state)
        if not ds or ds[0].at > now:
            return state, []
        return self._run_on_clone(state, now)

    def advanced(self, state: Any, now: int) -> Any:
        """The state as of ``now`` with its due deadlines applied (events dropped): what
        ``legal_actions`` and the views reason about.  The same object when nothing is due."""
        return self.advance(state, now)[0]

    def run(self, st: Any, upto: int, events: list[Event]) -> None:
        """Apply, in place on ``st``, every deadline due by ``upto`` (for ``apply``, which has
        cloned already)."""
        while True:
            ds = self._pending(st)
            if not ds or ds[0].at > upto:
                return
            d = ds[0]
            st.clock = max(st.clock, d.at)
            self._apply_one(st, d, events)

    def _run_on_clone(self, state: Any, upto: int) -> tuple[Any, list[Event]]:
        st = state.clone()
        events: list[Event] = []
        self.run(st, upto, events)
        return st, events


# --------------------------------------------------------------------------------------------
# The shared turn model (issue 23): who is awaited, for what, until when.
# --------------------------------------------------------------------------------------------
class Awaiting(TypedDict):
    """What a table waits for now, the same shape in every game's ``view(...)["awaiting"]``.

    ``kind`` is the game's own word for it (``"draw"``, ``"lay_away"``, ``"play"``,
    ``"next_round"`` …) or ``"nothing"`` (the game is over: ``seats`` is then ``[]``).
    ``seats`` are the seats whose move it is, in seat order (several at once in a simultaneous
    phase; ``[]`` when the table waits on time alone).  ``deadline`` is the instant (ms) at which
    the wait ends by itself if nobody moves -- the ``at`` of the pending ``Deadline`` that ends
    it, so a move's timeout takes effect then and a move at ``deadline - 1`` is on time -- or
    ``None`` when it lasts until someone moves.  It is public: every viewer gets the same.
    """

    kind: str
    seats: list[int]
    deadline: int | None


#: The word of ``Awaiting.kind`` when nothing is awaited any more (a finished game).
NOTHING = "nothing"


def awaiting(kind: str, seats: Iterable[int] = (), deadline: int | None = None) -> Awaiting:
    """An ``Awaiting`` built one way everywhere (seats sorted, copied), so every engine's
    view, the stopped view and the tests agree on the shape.

    >>> awaiting("lay_away", [1, 0], 30001)
    {'kind': 'lay_away', 'seats': [0, 1], 'deadline': 30001}
    >>> awaiting(NOTHING)
    {'kind': 'nothing', 'seats': [], 'deadline': None}
    """
    return {"kind": kind, "seats": sorted(seats), "deadline": deadline}


def placement_returns(scores: Sequence[int], *, low_wins: bool) -> list[float]:
    """Each seat's return in [0, 1] from the totals: the share of the other seats it finished
    ahead of, a tie counting half -- a sole winner 1, the sole last 0, equal totals share.

    One rule for every game (a search compares a game's outcomes without knowing the game);
    ``low_wins`` says which way the game counts.  With two seats it is win 1, loss 0, tie ½;
    the returns always add up to ``len(scores) / 2``.

    >>> placement_returns([12, 5, 5], low_wins=True)
    [0.0, 0.75, 0.75]
    >>> placement_returns([121, 90], low_wins=False), placement_returns([7], low_wins=False)
    ([1.0, 0.0], [1.0])
    """
    n = len(scores)
    if n == 1:
        return [1.0]
    out = []
    for s in scores:
        ahead = sum(1 for t in scores if (s < t if low_wins else s > t))
        tied = sum(1 for t in scores if t == s) - 1
        out.append((ahead + tied / 2) / (n - 1))
    return out


# --------------------------------------------------------------------------------------------
# Settings: the JSON round trip and the host menu checked against its JSON Schema.
# --------------------------------------------------------------------------------------------
def is_int(v: object) -> bool:
    """An ``int`` that is not a ``bool`` (JSON's integers; ``True`` is not a number of ms)."""
    return isinstance(v, int) and not isinstance(v, bool)


class JsonSettings:
    """Mixin of every engine's frozen ``Settings`` dataclass: the JSON round trip.

    ``to_json`` is every field by name, in field order; ``from_json`` refuses what is not an
    object or names an unknown field with ``bad_settings`` (never a ``TypeError``: the web
    layer passes stored and host input through here) and leaves the values to the dataclass's
    own ``__post_init__`` checks.  Defaults fill missing fields.
    """

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        """The JSON form, every field (``from_json`` restores it exactly)."""
        return {name: getattr(self, name) for name in _field_names(type(self))}

    @classmethod
    def from_json(cls, d: object) -> Any:
        """The settings ``to_json`` wrote; anything else is ``IllegalAction("bad_settings")``.

        The same JSON (the same names, in the same order, with values of the same types and
        equal) gives the same instance: a frozen one is shared safely, and a game's stored
        settings are read with its state on every change (``_SETTINGS_READ``).
        """
        if not isinstance(d, dict):
            raise IllegalAction(BAD_SETTINGS, "settings must be a JSON object")
        try:
            key: tuple[Any, ...] | None = (cls, *[(k, type(v), v) for k, v in d.items()])
            found = _SETTINGS_READ.get(key)  # type: ignore[arg-type]
        except TypeError:  # a value that is no scalar: not remembered (the checks decide)
            key, found = None, None
        if found is not None:
            return found
        unknown = set(d) - set(_field_names(cls))
        if unknown:
            raise IllegalAction(BAD_SETTINGS, f"unknown settings: {sorted(unknown)}")
        settings = cls(**d)
        if key is not None:
            if len(_SETTINGS_READ) >= _SETTINGS_READ_MAX:
                _SETTINGS_READ.clear()
            _SETTINGS_READ[key] = settings
        return settings


#: ``JsonSettings.from_json``'s instances by class and JSON (each name with its value's type
#: and the value: ``True`` and ``1`` are different keys), checked once; a few hundred at most.
#: Why: checking a game's settings again on every change cost as much as reading the rest of its
#: state (bench/results/session19-engine.md).
_SETTINGS_READ: dict[tuple[Any, ...], Any] = {}
_SETTINGS_READ_MAX = 512
#: Each settings class's field names, in field order (``dataclasses.fields`` builds them anew).
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """The dataclass ``cls``'s field names in field order, worked out once."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    return names


#: Issue 26: a game's pace, the host's choice beside each game's own menu.  ``live`` is the game
#: as it always was; ``turn_based`` is played over days, with ``turn_seconds`` per move (12 h,
#: 1 day or 3 days from the host's menu; ``Settings`` accepts any positive number so tests can
#: shorten it).  Every engine's ``Settings`` has the fields ``pace`` and ``turn_seconds`` and
#: its ``SETTINGS_SCHEMA`` the properties ``PACE_PROPERTIES``; what the pace changes in a game's
#: rules is the game's own business (Crisp's R28).
LIVE = "live"
TURN_BASED = "turn_based"
PACES = (LIVE, TURN_BASED)
TURN_SECONDS = (43_200, 86_400, 259_200)

PACE_PROPERTIES: dict[str, dict[str, Any]] = {
    "pace": {
        "type": "string",
        "enum": list(PACES),
        "default": LIVE,
        "title": "Pace",
        "description": (
            "live: everybody at the table at once, as always; turn_based: played over days, "
            "each move within turn_seconds, the players told when it is their move."
        ),
    },
    "turn_seconds": {
        "type": ["integer", "null"],
        "enum": [None, *TURN_SECONDS],
        "default": None,
        "title": "Time per move (turn-based)",
        "description": (
            "Seconds for each move of a turn-based game: 43200 (12 h), 86400 (1 day) or "
            "259200 (3 days); null in a live game. When it runs out the game's own timeout rule "
            "applies, as live."
        ),
    },
}


def check_pace(
    pace: object, turn_seconds: object, live_clock: tuple[str, object] = ("", None)
) -> None:
    """The ``Settings`` check of the two pace fields, the same for every engine; with
    ``live_clock`` (the name and value of the game's live time per move), that a turn-based
    game leaves it null: its one clock is ``turn_seconds``.

    >>> check_pace("live", None); check_pace("turn_based", 5)
    >>> check_pace("turn_based", None)
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: turn-based: turn_seconds must be a positive int
    >>> check_pace("live", 86400)
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: turn_seconds is for turn-based games only
    """
    if pace not in PACES:
        raise IllegalAction(BAD_SETTINGS, "pace must be 'live' or 'turn_based'")
    if pace == TURN_BASED:
        if not is_int(turn_seconds) or turn_seconds <= 0:  # type: ignore[operator]
            raise IllegalAction(BAD_SETTINGS, "turn-based: turn_seconds must be a positive int")
    elif turn_seconds is not None:
        raise IllegalAction(BAD_SETTINGS, "turn_seconds is for turn-based games only")
    name, value = live_clock
    if pace == TURN_BASED and value is not None:
        raise IllegalAction(BAD_SETTINGS, f"turn-based: {name} must be null")


def move_ms(pace: str, turn_seconds: int | None, live_seconds: int | None) -> int | None:
    """Each move's time in ms, or ``None`` (no limit): ``turn_seconds`` in a turn-based game,
    the game's live time per move otherwise -- the one figure its deadlines read, so the
    timeout rules are the same in both paces (issue 26).

    >>> move_ms("turn_based", 86400, None), move_ms("live", None, 30), move_ms("live", None, None)
    (86400000, 30000, None)
    """
    secs = turn_seconds if pace == TURN_BASED else live_seconds
    return None if secs is None else secs * 1000


_JSON_TYPES: dict[str, Any] = {
    "integer": is_int,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "null": lambda v: v is None,
}


def _words(prop: Mapping[str, Any]) -> str:
    """A property's allowed values for a refusal's reason: ``30, 60 or null``."""
    if "enum" in prop:
        values = [v for v in prop["enum"] if v is not None]
        names = [json.dumps(v) for v in values] + (["null"] if None in prop["enum"] else [])
    else:
        types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        names = [
            "true or false" if t == "boolean" else f"a{'n' * (t[0] in 'aeiou')} {t}" for t in types
        ]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def host_choices(schema: Mapping[str, Any], choices: object) -> dict[str, Any]:
    """A host's lobby ``choices`` checked against an engine's ``SETTINGS_SCHEMA``: every
    property, in schema order, with its ``default`` where the host chose nothing.

    The schema is written once, beside the rules, and the lobby form and the OpenAPI schema
    are built from it; checking against the same schema keeps the menu and its check from ever
    disagreeing.  Only the subset the engines use is read: an ``object`` with
    ``additionalProperties: false`` whose properties have ``type`` (a name or a list of names),
    ``default`` and, for a menu, ``enum``.  A refusal is ``IllegalAction("bad_settings")``.

    >>> schema = {"type": "object", "additionalProperties": False, "properties": {
    ...     "move_seconds": {"type": ["integer", "null"], "enum": [None, 30, 60], "default": None},
    ...     "pile_draw": {"type": "boolean", "default": False}}}
    >>> host_choices(schema, {"pile_draw": True})
    {'move_seconds': None, 'pile_draw': True}
    >>> host_choices(schema, {"move_seconds": True})
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: move_seconds must be 30, 60 or null
    >>> host_choices(schema, {"colour": "red"})
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: unknown settings: ['colour']
    """
    if not isinstance(choices, Mapping):
        raise IllegalAction(BAD_SETTINGS, "settings must be a JSON object")
    props: Mapping[str, Mapping[str, Any]] = schema["properties"]
    extra = set(choices) - set(props)
    if extra:
        raise IllegalAction(BAD_SETTINGS, f"unknown settings: {sorted(extra)}")
    out: dict[str, Any] = {}
    for name, prop in props.items():
        v = choices.get(name, prop["default"])
        types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        typed = any(_JSON_TYPES[t](v) for t in types)
        # ``True in [1]`` is true in Python: the type check comes first, then the menu.
        in_menu = "enum" not in prop or any(v == e and type(v) is type(e) for e in prop["enum"])
        if not typed or not in_menu:
            raise IllegalAction(BAD_SETTINGS, f"{name} must be {_words(prop)}")
        out[name] = v
    return out


# --------------------------------------------------------------------------------------------
# Decks and the new_game preamble.
# --------------------------------------------------------------------------------------------
#: The 52 wire codes every game uses (rank then suit; ``T`` the ten).  Each game orders its
#: own ``FULL_DECK``; the set is the same.
CARD_CODES = frozenset(r + s for r in "A23456789TJQK" for s in "SHDC")


def is_card(code: object) -> bool:
    """Whether ``code`` is one of the 52 wire codes (``"TD"``; not ``"10D"`` nor ``"td"``).

    >>> is_card("TD"), is_card("10D"), is_card("td"), is_card(None)
    (True, False, False, False)
    """
    return isinstance(code, str) and code in CARD_CODES


def validate_deck(deck: Iterable[str]) -> tuple[str, ...]:
    """``deck`` as a tuple if it is exactly the 52 cards once each; ``ValueError`` naming the
    problem otherwise.  A stacked deck is how tests and replays set a round up exactly, so a
    malformed one must fail loudly rather than deal something odd.

    >>> validate_deck(["AS"])
    Traceback (most recent call last):
    ...
    ValueError: a deck must hold each of the 52 cards exactly once
    """
    cards = tuple(deck)
    bad = [c for c in cards if not is_card(c)]
    if bad:
        raise ValueError(f"not card codes: {bad[:5]}")
    if len(cards) != 52 or len(set(cards)) != 52:
        raise ValueError("a deck must hold each of the 52 cards exactly once")
    return cards


def seeded_rng(seed: str, purpose: str) -> random.Random:
    """The one random source of an engine: derived from the game's ``seed`` and a purpose
    (``"first-dealer"``, ``"deck:3"``); sha256 keeps it stable across Python versions, so a
    seed replays the same game forever."""
    digest = hashlib.sha256(f"{seed}\x00{purpose}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))  # noqa: S311 - not security


def seeded_deck(full_deck: Sequence[str], seed: str, round_number: int) -> list[str]:
    """Round ``round_number``'s deck order (top first) when no explicit deck was given: the
    game's ``FULL_DECK`` shuffled by ``seeded_rng(seed, f"deck:{n}")``."""
    deck = list(full_deck)
    seeded_rng(seed, f"deck:{round_number}").shuffle(deck)
    return deck


def check_new_game(
    *,
    seats: object,
    settings: object,
    settings_type: type,
    seed: object,
    now: object,
    decks: Iterable[Iterable[str]] | None,
    min_seats: int,
    max_seats: int,
) -> list[list[str]] | None:
    """The arguments of ``new_game`` checked the same way in every game: the seat count in
    range, a ``Settings`` of the game's own type, a non-empty seed, int ms; the explicit decks
    validated and returned as lists (``None`` when none were given).  ``bad_settings``
    otherwise.

    >>> check_new_game(seats=3, settings=1, settings_type=int, seed="s", now=0, decks=None,
    ...                min_seats=4, max_seats=4)
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: a game has exactly 4 seats
    """
    if not is_int(seats) or not min_seats <= seats <= max_seats:  # type: ignore[operator]
        span = f"exactly {min_seats}" if min_seats == max_seats else f"{min_seats} to {max_seats}"
        raise IllegalAction(BAD_SETTINGS, f"a game has {span} seats")
    if not isinstance(settings, settings_type):
        raise IllegalAction(BAD_SETTINGS, "settings must be a Settings")
    if not isinstance(seed, str) or not seed:
        raise IllegalAction(BAD_SETTINGS, "seed must be a non-empty string")
    if not is_int(now):
        raise IllegalAction(BAD_SETTINGS, "now must be int milliseconds")
    if decks is None:
        return None
    try:
        return [list(validate_deck(d)) for d in decks]
    except (TypeError, ValueError) as exc:
        raise IllegalAction(BAD_SETTINGS, f"bad decks: {exc}") from None
