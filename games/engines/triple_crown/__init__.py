"""Triple Crown's rules as pure Python -- standard library only (docs/ENGINE.md,
rules/triple-crown.md).

Four players, 13 cards each; the holder of A♠ is High Crown, the holder of 2♦ Low Crown, the
other two Team Crown -- and nobody says which.  The web layer imports only the names below.
"""

from ..base import Deadline, Event, IllegalAction
from .actions import ACTION_TYPES, MEMOS, TRUMPS, Action
from .cards import FULL_DECK, is_card
from .deadlines import DEADLINE_KINDS, pending_deadlines
from .host import SETTINGS_SCHEMA, host_settings, winners_on_scores
from .rules import advance, apply, fire, is_over, legal_actions, new_game, returns, trick_winner
from .scoring import HandScore, roles_for, score_hand
from .state import GameState, Settings
from .views import EVENT_TYPES, awaiting, event_view, view

KIND = "triple_crown"
NAME = "Triple Crown"
#: §2: four players, no more and no fewer.
MIN_SEATS = 4
MAX_SEATS = 4
#: The event that closes a hand: the web layer files its data as the round's result.
ROUND_END_EVENT = "hand_over"
#: No deadline kind is silent: every one moves a card (docs/ENGINE.md, "Silent deadlines").
SILENT_DEADLINES: frozenset[str] = frozenset()
#: No action is exempt from the state's version check.
VERSION_EXEMPT_ACTIONS: frozenset[str] = frozenset()
#: No event is a timeout by its type: a timed-out move's event says ``"timeout": true``.
TIMEOUT_EVENTS: frozenset[str] = frozenset()
#: The keys of ``view(...)["you"]`` besides ``can`` that say what the seat may do now: a game
#: stopped outside the engine (docs/ENGINE.md, "Stopped games") empties them with ``can``.
MOVE_KEYS = frozenset({"legal"})

__all__ = [
    "ACTION_TYPES",
    "DEADLINE_KINDS",
    "EVENT_TYPES",
    "FULL_DECK",
    "KIND",
    "MAX_SEATS",
    "MEMOS",
    "MIN_SEATS",
    "MOVE_KEYS",
    "NAME",
    "ROUND_END_EVENT",
    "SETTINGS_SCHEMA",
    "SILENT_DEADLINES",
    "TIMEOUT_EVENTS",
    "TRUMPS",
    "VERSION_EXEMPT_ACTIONS",
    "Action",
    "Deadline",
    "Event",
    "GameState",
    "HandScore",
    "IllegalAction",
    "Settings",
    "advance",
    "apply",
    "awaiting",
    "event_view",
    "fire",
    "host_settings",
    "is_card",
    "is_over",
    "legal_actions",
    "new_game",
    "pending_deadlines",
    "returns",
    "roles_for",
    "score_hand",
    "trick_winner",
    "view",
    "winners_on_scores",
]
