"""Crisp's rules as pure Python -- standard library only (see docs/ENGINE.md, RULES.md).

The web layer imports only the names below.  Nothing here reads a clock, touches a database or
imports Django: time comes in as ``now`` (int ms), state goes out as JSON.
"""

from .actions import PLACES, Action, Event
from .cards import FULL_DECK, card_value, hand_total, is_card
from .deadlines import Deadline, pending_deadlines
from .errors import IllegalAction
from .rules import advance, apply, fire, legal_actions, new_game
from .state import GameState, Settings
from .views import event_view, view

__all__ = [
    "FULL_DECK",
    "PLACES",
    "Action",
    "Deadline",
    "Event",
    "GameState",
    "IllegalAction",
    "Settings",
    "advance",
    "apply",
    "card_value",
    "event_view",
    "fire",
    "hand_total",
    "is_card",
    "legal_actions",
    "new_game",
    "pending_deadlines",
    "view",
]
