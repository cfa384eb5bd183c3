"""Cribbage for two players to 121 as pure Python -- standard library only.

See docs/ENGINE.md ("Cribbage's engine") for the contract with the web layer and
rules/cribbage.md for the rules as implemented (sections, rulings C1-C30, engine decisions CE).
Nothing here reads a clock, touches a database or imports Django: time comes in as ``now``
(int ms), state goes out as JSON.
"""

from .actions import ACTION_TYPES, Action, Event
from .cards import FULL_DECK, is_card, rank, sort_cards, value
from .deadlines import Deadline, pending_deadlines
from .errors import IllegalAction
from .host import SETTINGS_SCHEMA, host_settings, winners_on_scores
from .rules import advance, apply, cut_for_deal, fire, legal_actions, new_game
from .scoring import HandScore, PegScore, ScoreItem, score_hand, score_pegging
from .state import GameState, Settings
from .views import event_view, view

#: The registry's name for this game (``Game.kind``) and its seats (C1: exactly two).
KIND = "cribbage"
NAME = "Cribbage"
MIN_SEATS = 2
MAX_SEATS = 2
#: The event that ends a round (one hand): the web layer files its data as the round's result.
ROUND_END_EVENT = "hand_over"
#: Action types applied whatever version the client had seen (docs/ENGINE.md): none.
VERSION_EXEMPT_ACTIONS: frozenset[str] = frozenset()
#: Event types that are by themselves a timeout (docs/ENGINE.md): none; a move the server
#: makes for a seat says ``"timeout": true`` in its data.
TIMEOUT_EVENTS: frozenset[str] = frozenset()
#: The keys of ``view(...)["you"]`` besides ``can`` that say what the seat may do now: a game
#: stopped outside the engine (docs/ENGINE.md, "Optional names") empties them with ``can``.
MOVE_KEYS = frozenset({"playable"})

__all__ = [
    "ACTION_TYPES",
    "FULL_DECK",
    "KIND",
    "MAX_SEATS",
    "MIN_SEATS",
    "MOVE_KEYS",
    "NAME",
    "ROUND_END_EVENT",
    "SETTINGS_SCHEMA",
    "TIMEOUT_EVENTS",
    "VERSION_EXEMPT_ACTIONS",
    "Action",
    "Deadline",
    "Event",
    "GameState",
    "HandScore",
    "IllegalAction",
    "PegScore",
    "ScoreItem",
    "Settings",
    "advance",
    "apply",
    "cut_for_deal",
    "event_view",
    "fire",
    "host_settings",
    "is_card",
    "legal_actions",
    "new_game",
    "pending_deadlines",
    "rank",
    "score_hand",
    "score_pegging",
    "sort_cards",
    "value",
    "view",
    "winners_on_scores",
]
