"""What a bot may know: the redacted payloads its seat received, and its memory of them.

This module is the fairness boundary.  A bot decides from a ``Memory`` and nothing else, and a
``Memory`` can only be fed JSON-safe dicts of the two shapes a seat's socket carries:

* ``view`` -- the engine's ``view(state, seat, now)`` for *this* seat (``"seat"`` must match);
* events -- the engine's ``event_view(event, seat)`` for *this* seat.  An event is accepted only
  if redacting it again for this seat changes nothing: a full (unredacted) event, or one
  redacted for another seat (another player's look), is refused, because ``event_view`` would
  hide something in it.

Anything else -- a ``GameState``, an ``Event`` object, a dataclass, a tuple, a dict holding a
``seed``, a deck or a deck order (``GameState.to_json()``), another seat's view -- raises
``ObservationError``.  So the true state cannot reach a bot by accident: there is no parameter
that would carry it, and the one object that is carried refuses it.

Two objects, two roles.  ``Memory`` is the *caller's* accumulator (the service layer, the
referee): it is fed frames and records what the bot decided.  A bot never gets it.  A decision
gets an ``Observation`` (``Memory.observation()``): a frozen record of the same payloads and of
the seat's own past decisions (``Decision``), validated again when it is built, holding only
immutable values (JSON text, ints, tuples).  It has no writable field -- no ``notes``, no
assignable ``view``/``events`` -- and every read of ``view``/``events``/``anchor`` decodes a
fresh copy, so nothing a caller or a bot writes into what it read reaches the next read.  The
only way to tell a bot something is to show the seat a payload, which the checks above vet.

The memory is a plain value (``to_json``/``from_json``), so a Celery task can persist it between
decisions next to the seat.  It keeps the current round's events (a bot, like a good player,
may remember every look of the round) and the latest view; earlier rounds only matter through
the scores, which every view carries.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from games.engines import engine_for

#: Keys that only the true state (or an unredacted event) carries; never in a seat's payload.
FORBIDDEN_KEYS = frozenset({"seed", "deck", "deck_order", "decks"})

#: The exact types a JSON document decodes to.  ``type(x) in`` (not ``isinstance``) so that
#: subclasses -- an ``IntEnum``, a ``defaultdict`` holding something else -- are refused too.
_SCALARS = (str, int, float, bool, type(None))


class ObservationError(TypeError):
    """A bot was offered something its seat was not sent: the payload is refused whole."""


def check_json(value: object, where: str = "payload") -> None:
    """Raise ``ObservationError`` unless ``value`` is plain JSON with no secret-bearing key.

    >>> check_json({"pile": ["AS"], "deck_size": 40})
    >>> check_json({"deck": ["AS"]})
    Traceback (most recent call last):
    ...
    games.bots.observation.ObservationError: payload.deck: 'deck' is never sent to a seat
    """
    t = type(value)
    if t in _SCALARS:
        return
    if t is list:
        for i, v in enumerate(value):  # type: ignore[arg-type]
            check_json(v, f"{where}[{i}]")
        return
    if t is dict:
        for k, v in value.items():  # type: ignore[attr-defined]
            if type(k) is not str:
                raise ObservationError(f"{where}: key {k!r} is not a string")
            if k in FORBIDDEN_KEYS and v is not None:  # a redacted form keeps the key, null
                raise ObservationError(f"{where}.{k}: {k!r} is never sent to a seat")
            check_json(v, f"{where}.{k}")
        return
    raise ObservationError(f"{where}: {t.__name__} is not JSON (only redacted payloads)")


def _copy(value: Any) -> Any:
    """A deep copy of plain JSON (cheaper than ``copy.deepcopy``): memory never aliases input."""
    if type(value) is dict:
        return {k: _copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_copy(v) for v in value]
    return value


def _dump(value: Any) -> str:
    """Canonical JSON text: the immutable form an ``Observation`` holds its payloads in."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


@functools.lru_cache(maxsize=4096)
def _checked_view(kind: str, seat: int, text: str) -> None:
    """``_check_view`` of a view's JSON text, remembered: a text is immutable, so a text once
    accepted for this seat stays accepted (an ``Observation`` is built per decision)."""
    _check_view(kind, seat, json.loads(text))


@functools.lru_cache(maxsize=65536)
def _checked_event(kind: str, seat: int, text: str) -> None:
    """``_check_event`` of an event's JSON text, remembered like ``_checked_view``."""
    _check_event(kind, seat, json.loads(text), "event")


def _check_view(kind: str, seat: int, view: object) -> None:
    """Refuse a view that is not this seat's own (``ObservationError``)."""
    check_json(view, "view")
    if type(view) is not dict:
        raise ObservationError("view: not a dict")
    if view.get("seat") != seat:
        raise ObservationError(f"view: rendered for seat {view.get('seat')!r}, this is seat {seat}")
    if type(view.get("you")) is not dict:
        raise ObservationError("view: a seat's view has 'you'")
    from . import game_for  # the per-game check (no cycle at import time)

    game_for(kind).check_view(view, seat)


def _check_event(kind: str, seat: int, ev: object, where: str) -> bool:
    """Refuse an event that is not in this seat's redacted form; False for an event that is no
    engine event (lobby events carry no card) and is ignored."""
    check_json(ev, where)
    if type(ev) is not dict or type(ev.get("type")) is not str:
        raise ObservationError(f"{where}: not an event dict")
    data = ev.get("data")
    if type(data) is not dict:
        raise ObservationError(f"{where}: an event needs a data dict")
    engine = engine_for(kind)
    try:
        again = engine.event_view(engine.Event(ev["type"], data), seat)
    except (ValueError, KeyError):
        return False
    if again["data"] != data:
        raise ObservationError(f"{where} ({ev['type']}): not redacted for seat {seat}")
    return True


@dataclass(frozen=True, slots=True)
class Decision:
    """One past decision of the seat's bot, as the caller recorded it (``Memory.record``).

    ``at``: the instant it was taken for; ``action``: the wire action it returned, as canonical
    JSON text (``None``: it chose to do nothing); ``window``: the seat's own open choice it
    answered, derived from the view it decided on by the game's ``open_window`` (a game whose
    seats answer windows of time names the window, e.g. ``"r<round>:t<turn>"``; ``None``
    elsewhere).  That is how a bot remembers that it let a window pass without any writable
    notes: the fact is its own earlier output.
    """

    at: int
    action: str | None
    window: str | None

    def __post_init__(self) -> None:
        if type(self.at) is not int:
            raise ObservationError("Decision.at must be int milliseconds")
        if self.action is not None:
            if type(self.action) is not str:
                raise ObservationError("Decision.action is JSON text or None")
            wire = json.loads(self.action)
            check_json(wire, "decision")
            if type(wire) is not dict or type(wire.get("type")) is not str:
                raise ObservationError("Decision.action: not a wire action")
        if self.window is not None and type(self.window) is not str:
            raise ObservationError("Decision.window is a string or None")

    @property
    def wire(self) -> dict[str, Any] | None:
        """The action as the bot returned it (a fresh copy)."""
        return None if self.action is None else json.loads(self.action)


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything a decision may see: one seat's redacted payloads and its own past decisions.

    Immutable by construction: every field is a ``str``, an ``int``, ``None`` or a tuple of
    them (``Decision`` is frozen too); assigning a field raises.  ``view``, ``anchor`` and
    ``events`` are decoded afresh on every read, so a bot may scribble on what it reads
    without that reaching its next read, and a caller cannot slip anything in after the
    checks.  Built by ``Memory.observation()``; building one by hand runs the same checks as
    ``Memory.observe`` (this seat's view, events that are fixed points of the engine's
    redaction for this seat, no secret-bearing key), so no constructor bypasses them.
    """

    kind: str
    seat: int
    salt: str
    view_json: str | None
    anchor_json: str | None
    events_json: tuple[str, ...]
    decisions: tuple[Decision, ...]

    def __post_init__(self) -> None:
        if type(self.kind) is not str or type(self.seat) is not int or type(self.salt) is not str:
            raise ObservationError("Observation(kind: str, seat: int, salt: str, ...)")
        engine_for(self.kind)
        for name in ("view_json", "anchor_json"):
            text = getattr(self, name)
            if text is not None:
                if type(text) is not str:
                    raise ObservationError(f"{name} must be JSON text")
                _checked_view(self.kind, self.seat, text)
        if type(self.events_json) is not tuple or type(self.decisions) is not tuple:
            raise ObservationError("events_json and decisions are tuples")
        for i, text in enumerate(self.events_json):
            if type(text) is not str:
                raise ObservationError(f"events_json[{i}] must be JSON text")
            _checked_event(self.kind, self.seat, text)
        for d in self.decisions:
            if type(d) is not Decision:
                raise ObservationError("decisions holds Decision records only")

    @property
    def view(self) -> dict[str, Any] | None:
        """The latest view received (a fresh copy)."""
        return None if self.view_json is None else json.loads(self.view_json)

    @property
    def anchor(self) -> dict[str, Any] | None:
        """The first view of this round when its deal was not seen (a fresh copy)."""
        return None if self.anchor_json is None else json.loads(self.anchor_json)

    @property
    def events(self) -> list[dict[str, Any]]:
        """This round's events as received, oldest first (fresh copies)."""
        return [json.loads(e) for e in self.events_json]

    def __repr__(self) -> str:
        return (
            f"<Observation {self.kind} seat {self.seat} events {len(self.events_json)} "
            f"decisions {len(self.decisions)}>"
        )


class Memory:
    """One seat's memory of a game: what its socket received, and what its bot decided.

    The caller's object (service layer, referee), never a bot's: feed it with
    ``observe(view=..., events=[...])`` after every update frame the seat gets (events in their
    order, then the state the frame carried), hand the bot ``observation()``, and ``record``
    what it decided (``games.bots.ask`` does all three).  There is no free-form scratch space:
    what a bot remembers of itself is its own past decisions (``Decision``), e.g. the
    windows it let pass, so a bot asked again in the same window does not
    change its mind or search twice.

    ``salt`` individualises deliberate forgetting (the easy level): which looks a bot forgets
    is a stable function of the salt and the event, so asking twice gives the same answer.
    """

    __slots__ = ("_anchor", "_decisions", "_events", "_last_seq", "_view", "kind", "salt", "seat")

    def __init__(self, kind: str, seat: int, salt: str = "") -> None:
        if type(kind) is not str or type(seat) is not int or type(salt) is not str:
            raise ObservationError("Memory(kind: str, seat: int, salt: str)")
        engine_for(kind)  # KeyError for a kind that does not exist
        self.kind = kind
        self.seat = seat
        self.salt = salt
        # Held as canonical JSON text (what an ``Observation`` carries), encoded once.
        #: This round's events as received, oldest first (from its ``round_dealt`` when seen).
        self._events: list[str] = []
        #: The first view of this round when its ``round_dealt`` was not seen (a bot sitting
        #: in mid-round): knowledge starts from it.  ``None`` when the deal was seen.
        self._anchor: str | None = None
        #: The latest view received.
        self._view: str | None = None
        #: This round's decisions of the seat's bot, oldest first.
        self._decisions: list[Decision] = []
        self._last_seq: int | None = None

    # -- reading (copies: the memory changes only through observe and record) --------------
    @property
    def view(self) -> dict[str, Any] | None:
        return None if self._view is None else json.loads(self._view)

    @property
    def anchor(self) -> dict[str, Any] | None:
        return None if self._anchor is None else json.loads(self._anchor)

    @property
    def events(self) -> list[dict[str, Any]]:
        return [json.loads(e) for e in self._events]

    @property
    def decisions(self) -> tuple[Decision, ...]:
        return tuple(self._decisions)

    def observation(self) -> Observation:
        """The frozen record a decision is taken from (see ``Observation``)."""
        return Observation(
            kind=self.kind,
            seat=self.seat,
            salt=self.salt,
            view_json=self._view,
            anchor_json=self._anchor,
            events_json=tuple(self._events),
            decisions=tuple(self._decisions),
        )

    # -- feeding ---------------------------------------------------------------------------
    def observe(
        self,
        *,
        view: Mapping[str, Any] | None = None,
        events: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        """Remember one frame: its events (redacted for this seat), then its state view.

        Events may be the engine's ``{"type", "data"}`` or the API's ``event_payload`` form
        (``seq``, ``version``, ``at`` besides); an event whose ``seq`` was already seen is
        skipped, so a catch-up that repeats events is harmless.  Events the engine has no
        redaction rule for (lobby events: joins, leaves) carry no cards and are ignored.
        Everything is validated before anything is stored: a refused frame changes nothing.
        """
        accepted: list[dict[str, Any]] = []
        if isinstance(events, (str, bytes, Mapping)):
            raise ObservationError("events must be a list of event dicts")
        last_seq = self._last_seq
        for i, ev in enumerate(events):
            check_json(ev, f"events[{i}]")
            if type(ev) is not dict:
                raise ObservationError(f"events[{i}]: not an event dict")
            seq = ev.get("seq")
            if type(seq) is int:
                if last_seq is not None and seq <= last_seq:
                    continue
                last_seq = seq
            if not _check_event(self.kind, self.seat, ev, f"events[{i}]"):
                continue  # not an engine event (lobby events carry no card)
            accepted.append({"type": ev["type"], "data": ev["data"]})
        if view is not None:
            _check_view(self.kind, self.seat, view)
        self._last_seq = last_seq
        for ev in accepted:
            if ev["type"] == "round_dealt":
                self._events = []
                self._anchor = None
                self._decisions = []
            self._events.append(_dump(ev))
        if view is not None:
            v = _dump(view)
            anchor = self.anchor
            if not self._saw_deal(view) and (
                anchor is None or anchor.get("round") != view.get("round")
            ):
                # Joined mid-round (or the round changed without us seeing its deal): what we
                # know starts here; the events of this frame are already in this view.
                self._anchor = v
                self._events = []
                self._decisions = []
            self._view = v

    def record(self, at: int, action: Mapping[str, Any] | None) -> Decision | None:
        """Remember what the bot decided at ``at`` on the latest view (``None``: nothing).

        The window it answered is derived from that view by the game's ``open_window`` --
        from the seat's own payload, not from anything the caller says.  Doing nothing outside
        any window of its own decides nothing and is not recorded (a bot is asked after every
        change: the record would grow with every other seat's move)."""
        if self._view is None:
            if action is None:
                return None
            raise ObservationError("a decision is recorded after a view")
        from . import game_for

        opened = getattr(game_for(self.kind), "open_window", None)
        window = None if opened is None else opened(json.loads(self._view), self.seat)
        if action is None and window is None:
            return None
        d = Decision(at=at, action=None if action is None else _dump(dict(action)), window=window)
        self._decisions.append(d)
        return d

    def _saw_deal(self, view: Mapping[str, Any]) -> bool:
        if not self._events:
            return False
        first = json.loads(self._events[0])
        return first["type"] == "round_dealt" and first["data"].get("round") == view.get("round")

    # -- storage ---------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """Plain JSON, for a task to store next to the seat between decisions."""
        return {
            "kind": self.kind,
            "seat": self.seat,
            "salt": self.salt,
            "events": self.events,
            "anchor": self.anchor,
            "view": self.view,
            "decisions": [[d.at, d.action, d.window] for d in self._decisions],
            "last_seq": self._last_seq,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Memory:
        """Rebuild a stored memory; its contents are validated again like fresh payloads.

        A memory stored before decisions were recorded (it had free-form ``notes``) loads
        without them: its bot decides its open window again, once."""
        check_json(dict(d), "memory")
        m = cls(d["kind"], d["seat"], d.get("salt", ""))
        if d.get("anchor") is not None:
            m.observe(view=d["anchor"])
        m.observe(events=d.get("events", ()))
        if d.get("view") is not None:
            m.observe(view=d["view"])
        decisions = d.get("decisions") or []
        if type(decisions) is not list:
            raise ObservationError("memory.decisions: not a list")
        for row in decisions:
            if type(row) is not list or len(row) != 3:
                raise ObservationError("memory.decisions: [at, action, window] rows")
            m._decisions.append(Decision(*row))
        m._last_seq = d.get("last_seq")
        return m

    def __repr__(self) -> str:
        rnd = (self.view or {}).get("round")
        return f"<Memory {self.kind} seat {self.seat} round {rnd} events {len(self._events)}>"
