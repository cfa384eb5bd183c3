"""The engine contract as a type: what every package under ``games/engines/<kind>/`` exports.

docs/ENGINE.md describes the contract in words; ``Engine`` says it to the type checker and to
``tests/engines/test_engine_protocol.py``, which checks every registered engine against it at
run time (each member present, each function's parameters the same names and kinds).  A game
module *is* an ``Engine``: the web layer receives one from ``engine_for(kind)`` and speaks
nothing but these names, so nothing shared asks "does this game have X?" -- a game without a
silent deadline declares an empty ``SILENT_DEADLINES`` instead.

States, settings and actions are each game's own classes; the web layer only passes them back
to the same engine, so the parameters that take them are ``Any`` (a ``Protocol`` parameter is
contravariant: a narrower type in a game would not conform).  What the web layer reads of
them is ``GameStateType`` and ``SettingsType``.

Standard library only, like the engines (it is a description of them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .base import Awaiting, Deadline, Event, IllegalAction

__all__ = ["Awaiting", "Engine", "GameStateType", "SettingsType"]


class SettingsType(Protocol):
    """What the web layer does with a game's ``Settings``: store it as JSON."""

    def to_json(self) -> dict[str, Any]: ...


class GameStateType(Protocol):
    """What the web layer reads of a game's ``GameState`` (the rest is the engine's)."""

    seats: int
    status: str  # "playing" | "finished"
    scores: list[int]
    winners: list[int]
    clock: int

    @property
    def round_number(self) -> int: ...

    def to_json(self) -> dict[str, Any]: ...


class _FromJson(Protocol):
    """A class the web layer restores from its stored JSON (``GameState``, ``Settings``)."""

    def from_json(self, d: dict[str, Any]) -> Any: ...


class _FromWire(Protocol):
    """``Action``: parsed from the client's JSON, refusing anything malformed."""

    def from_wire(self, d: object) -> Any: ...


class Engine(Protocol):
    """One game's engine package (docs/ENGINE.md, "What every engine package exports").

    Data members are declared data: what a game would otherwise be asked about by name in
    shared code.  Functions are pure: no clock (time is ``now``, int ms), no database, no
    randomness but the seeded one, the input state never changed.
    """

    #: The registry key (``Game.kind``) and the English display name.
    KIND: str
    NAME: str
    #: How many players a game takes.
    MIN_SEATS: int
    MAX_SEATS: int
    #: The event type that closes a round; its ``data`` is filed as the round's result.
    ROUND_END_EVENT: str
    #: Deadline kinds the web layer gives no timer of their own (docs/ENGINE.md).
    SILENT_DEADLINES: frozenset[str]
    #: Action types the web layer applies whatever state version the client saw.
    VERSION_EXEMPT_ACTIONS: frozenset[str]
    #: Event types that are, by type, a move the server made for a seat that timed out (an
    #: event of any type with ``"timeout": true`` and a ``seat`` is one too).
    TIMEOUT_EVENTS: frozenset[str]
    #: Keys of ``view(...)["you"]`` besides ``can`` that say what the seat may do now.
    MOVE_KEYS: frozenset[str]
    #: The wire vocabulary: every action type and every event type the game has.
    ACTION_TYPES: tuple[str, ...]
    EVENT_TYPES: frozenset[str]
    #: JSON Schema of the host's lobby menu (the lobby form and the OpenAPI schema).
    SETTINGS_SCHEMA: dict[str, Any]
    #: The 52 wire codes in the game's own order.
    FULL_DECK: tuple[str, ...]

    #: The shared value types, re-exported.
    Event: type[Event]
    Deadline: type[Deadline]
    IllegalAction: type[IllegalAction]

    # The game's own classes: read-only members (a class conforms by its class methods, and a
    # settable member would have to be exactly the Protocol's type).
    @property
    def Settings(self) -> _FromJson: ...

    @property
    def GameState(self) -> _FromJson: ...

    @property
    def Action(self) -> _FromWire: ...

    def host_settings(self, choices: Mapping[str, Any]) -> Any: ...

    def winners_on_scores(self, scores: list[int]) -> list[int]: ...

    def new_game(
        self,
        *,
        seats: int,
        settings: Any,
        seed: str,
        now: int,
        decks: Sequence[Sequence[str]] | None = None,
    ) -> tuple[Any, list[Event]]: ...

    def legal_actions(self, state: Any, seat: int, now: int) -> list[Any]: ...

    def apply(self, state: Any, seat: int, action: Any, now: int) -> tuple[Any, list[Event]]: ...

    def pending_deadlines(self, state: Any) -> list[Deadline]: ...

    def fire(self, state: Any, key: str, now: int) -> tuple[Any, list[Event]]: ...

    def advance(self, state: Any, now: int) -> tuple[Any, list[Event]]: ...

    def view(self, state: Any, seat: int | None, now: int) -> dict[str, Any]: ...

    def event_view(self, event: Event, seat: int | None) -> dict[str, Any]: ...

    def awaiting(self, state: Any, now: int) -> Awaiting: ...

    def is_over(self, state: Any) -> bool: ...

    def returns(self, state: Any) -> list[float]: ...
