"""Crisp's rules as pure Python -- standard library only (see docs/ENGINE.md, rules/crisp.md).

The web layer imports only the names below.  Nothing here reads a clock, touches a database or
imports Django: time comes in as ``now`` (int ms), state goes out as JSON.
"""

from .actions import ACTION_TYPES, PLACES, Action, Event
from .cards import FULL_DECK, card_value, hand_total, is_card
from .deadlines import Deadline, pending_deadlines
from .errors import IllegalAction
from .host import SETTINGS_SCHEMA, host_settings, winners_on_scores
from .rules import advance, apply, fire, is_over, legal_actions, new_game, returns
from .state import GameState, Settings
from .views import EVENT_TYPES, awaiting, event_view, view

#: The registry's name for this game (``Game.kind``) and its seat range (rules section 1).
KIND = "crisp"
NAME = "Crisp"
MIN_SEATS = 2
MAX_SEATS = 8
#: The event that ends a round: the web layer files the round's result under it.
ROUND_END_EVENT = "reveal"
#: Action types applied whatever version the client had seen (docs/ENGINE.md): the opening
#: ``look`` depends on nothing the client saw (it shows the seat's own cards as they lie now,
#: E5) and commutes with every other seat's look, so at a deal, when every seat asks at once,
#: no look can refuse another (R3).
VERSION_EXEMPT_ACTIONS: frozenset[str] = frozenset({"look"})
#: Event types that are by themselves a timeout of their ``seat`` (the web layer's sit-in
#: count), besides any event whose data says ``"timeout": true``: the draw clock's ``timeout``.
TIMEOUT_EVENTS: frozenset[str] = frozenset({"timeout"})
#: Deadline kinds whose only effect every receiver computes from a state it already has, so
#: the web layer gives them no timer and no change of their own (docs/ENGINE.md, "Silent
#: deadlines"): ``may_start`` opens the draw at the turn's ``start_at``, which every view
#: shows, and the draw clock it starts runs from that same instant; ``window_closed`` ends a
#: seat's right to call crisp after ``windows[].closes_at``, which every view shows too, and
#: does nothing else (the window leaves the state; no card, turn or clock moves). Each still
#: takes effect at exactly its instant -- ``apply``, ``fire`` and ``advance`` apply it before
#: anything at or after it -- so no rule and no redaction depends on whether a timer ran.
SILENT_DEADLINES = frozenset({"may_start", "window_closed"})
#: No key of ``view(...)["you"]`` besides ``can`` says what the seat may do now.
MOVE_KEYS: frozenset[str] = frozenset()

__all__ = [
    "ACTION_TYPES",
    "EVENT_TYPES",
    "FULL_DECK",
    "KIND",
    "MAX_SEATS",
    "MIN_SEATS",
    "MOVE_KEYS",
    "NAME",
    "PLACES",
    "ROUND_END_EVENT",
    "SETTINGS_SCHEMA",
    "SILENT_DEADLINES",
    "TIMEOUT_EVENTS",
    "VERSION_EXEMPT_ACTIONS",
    "Action",
    "Deadline",
    "Event",
    "GameState",
    "IllegalAction",
    "Settings",
    "advance",
    "apply",
    "awaiting",
    "card_value",
    "event_view",
    "fire",
    "hand_total",
    "host_settings",
    "is_card",
    "is_over",
    "legal_actions",
    "new_game",
    "pending_deadlines",
    "returns",
    "view",
    "winners_on_scores",
]
