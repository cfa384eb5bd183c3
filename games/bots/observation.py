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

The memory is a plain value (``to_json``/``from_json``), so a Celery task can persist it between
decisions next to the seat.  It keeps the current round's events (a bot, like a good player,
may remember every look of the round) and the latest view; earlier rounds only matter through
the scores, which every view carries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


class Memory:
    """One seat's memory of a game: what its socket received, and the bot's own notes.

    Feed it with ``observe(view=..., events=[...])`` after every update frame the seat gets
    (events in their order, then the state the frame carried).  ``notes`` is the bot's own
    scratch (JSON too): e.g. the crisp windows it already decided not to call in, so a bot
    asked again in the same window does not change its mind or search twice.

    ``salt`` individualises deliberate forgetting (the easy level): which looks a bot forgets
    is a stable function of the salt and the event, so asking twice gives the same answer.
    """

    __slots__ = ("_last_seq", "anchor", "events", "kind", "notes", "salt", "seat", "view")

    def __init__(self, kind: str, seat: int, salt: str = "") -> None:
        if type(kind) is not str or type(seat) is not int or type(salt) is not str:
            raise ObservationError("Memory(kind: str, seat: int, salt: str)")
        engine_for(kind)  # KeyError for a kind that does not exist
        self.kind = kind
        self.seat = seat
        self.salt = salt
        #: This round's events as received, oldest first (from its ``round_dealt`` when seen).
        self.events: list[dict[str, Any]] = []
        #: The first view of this round when its ``round_dealt`` was not seen (a bot sitting
        #: in mid-round): knowledge starts from it.  ``None`` when the deal was seen.
        self.anchor: dict[str, Any] | None = None
        #: The latest view received.
        self.view: dict[str, Any] | None = None
        self.notes: dict[str, Any] = {}
        self._last_seq: int | None = None

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
        engine = engine_for(self.kind)
        accepted: list[dict[str, Any]] = []
        if isinstance(events, (str, bytes, Mapping)):
            raise ObservationError("events must be a list of event dicts")
        last_seq = self._last_seq
        for i, ev in enumerate(events):
            check_json(ev, f"events[{i}]")
            if type(ev) is not dict or type(ev.get("type")) is not str:
                raise ObservationError(f"events[{i}]: not an event dict")
            data = ev.get("data")
            if type(data) is not dict:
                raise ObservationError(f"events[{i}]: an event needs a data dict")
            seq = ev.get("seq")
            if type(seq) is int:
                if last_seq is not None and seq <= last_seq:
                    continue
                last_seq = seq
            try:
                again = engine.event_view(engine.Event(ev["type"], data), self.seat)
            except (ValueError, KeyError):
                continue  # not an engine event (lobby events carry no card)
            if again["data"] != data:
                raise ObservationError(
                    f"events[{i}] ({ev['type']}): not redacted for seat {self.seat}"
                )
            accepted.append({"type": ev["type"], "data": _copy(data)})
        if view is not None:
            check_json(view, "view")
            if type(view) is not dict:
                raise ObservationError("view: not a dict")
            if view.get("seat") != self.seat:
                raise ObservationError(
                    f"view: rendered for seat {view.get('seat')!r}, this is seat {self.seat}"
                )
            if type(view.get("you")) is not dict:
                raise ObservationError("view: a seat's view has 'you'")
            from . import game_for  # the per-game check (no cycle at import time)

            game_for(self.kind).check_view(view, self.seat)
        self._last_seq = last_seq
        for ev in accepted:
            if ev["type"] == "round_dealt":
                self.events = []
                self.anchor = None
            self.events.append(ev)
        if view is not None:
            v = _copy(view)
            if not self._saw_deal(v) and (
                self.anchor is None or self.anchor.get("round") != v.get("round")
            ):
                # Joined mid-round (or the round changed without us seeing its deal): what we
                # know starts here; the events of this frame are already in this view.
                self.anchor = v
                self.events = []
            self.view = v

    def _saw_deal(self, view: Mapping[str, Any]) -> bool:
        return any(
            e["type"] == "round_dealt" and e["data"].get("round") == view.get("round")
            for e in self.events[:1]
        )

    # -- storage ---------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """Plain JSON, for a task to store next to the seat between decisions."""
        return {
            "kind": self.kind,
            "seat": self.seat,
            "salt": self.salt,
            "events": _copy(self.events),
            "anchor": _copy(self.anchor),
            "view": _copy(self.view),
            "notes": _copy(self.notes),
            "last_seq": self._last_seq,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Memory:
        """Rebuild a stored memory; its contents are validated again like fresh payloads."""
        check_json(dict(d), "memory")
        m = cls(d["kind"], d["seat"], d.get("salt", ""))
        if d.get("anchor") is not None:
            m.observe(view=d["anchor"])
        m.observe(events=d.get("events", ()))
        if d.get("view") is not None:
            m.observe(view=d["view"])
        m.notes = _copy(d.get("notes") or {})
        m._last_seq = d.get("last_seq")
        return m

    def __repr__(self) -> str:
        rnd = self.view.get("round") if self.view else None
        return f"<Memory {self.kind} seat {self.seat} round {rnd} events {len(self.events)}>"
