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
from .rules import advance, apply, cut_for_deal, fire, is_over, legal_actions, new_game, returns
from .scoring import HandScore, PegScore, ScoreItem, score_hand, score_pegging
from .state import GameState, Settings
from .views import EVENT_TYPES, awaiting, event_view, view

#: The registry's name for this game (``Game.kind``) and its seats (C1: exactly two).
KIND = "cribbage"
NAME = "Cribbage"
MIN_SEATS = 2
MAX_SEATS = 2
#: The event that ends a round (one hand): the web layer files its data as the round's result.
ROUND_END_EVENT = "hand_over"
#: No deadline kind is silent: every one moves a card (docs/ENGINE.md, "Silent deadlines").
SILENT_DEADLINES: frozenset[str] = frozenset()
#: No action is exempt from the state's version check.
VERSION_EXEMPT_ACTIONS: frozenset[str] = frozenset()
#: No event is a timeout by its type: a timed-out move's event says ``"timeout": true``.
TIMEOUT_EVENTS: frozenset[str] = frozenset()
#: The keys of ``view(...)["you"]`` besides ``can`` that say what the seat may do now: a game
#: stopped outside the engine (docs/ENGINE.md, "Stopped games") empties them with ``can``.
MOVE_KEYS = frozenset({"playable"})

__all__ = [
    "ACTION_TYPES",
    "EVENT_TYPES",
    "FULL_DECK",
    "KIND",
    "MAX_SEATS",
    "MIN_SEATS",
    "MOVE_KEYS",
    "NAME",
    "ROUND_END_EVENT",
    "SETTINGS_SCHEMA",
    "SILENT_DEADLINES",
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
    "awaiting",
    "cut_for_deal",
    "event_view",
    "fire",
    "host_settings",
    "is_card",
    "is_over",
    "legal_actions",
    "new_game",
    "pending_deadlines",
    "rank",
    "returns",
    "score_hand",
    "score_pegging",
    "sort_cards",
    "value",
    "view",
    "winners_on_scores",
]
