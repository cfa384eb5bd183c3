"""Triple Crown's rules as pure Python -- standard library only (docs/ENGINE.md,
rules/triple-crown.md).

Four players, 13 cards each; the holder of A♠ is High Crown, the holder of 2♦ Low Crown, the
other two Team Crown -- and nobody says which.  The web layer imports only the names below.
"""

from ..base import Deadline, Event, IllegalAction
from .actions import MEMOS, TRUMPS, Action
from .cards import FULL_DECK, is_card
from .deadlines import DEADLINE_KINDS, pending_deadlines
from .host import SETTINGS_SCHEMA, host_settings, winners_on_scores
from .rules import advance, apply, fire, legal_actions, new_game, trick_winner
from .scoring import HandScore, roles_for, score_hand
from .state import GameState, Settings
from .views import event_view, view

KIND = "triple_crown"
NAME = "Triple Crown"
#: §2: four players, no more and no fewer.
MIN_SEATS = 4
MAX_SEATS = 4
#: The event that closes a hand: the web layer files its data as the round's result.
ROUND_END_EVENT = "hand_over"
#: Action types applied whatever version the client had seen (docs/ENGINE.md): none.
VERSION_EXEMPT_ACTIONS: frozenset[str] = frozenset()
#: Event types that are by themselves a timeout (docs/ENGINE.md): none; a move the server
#: makes for a seat says ``"timeout": true`` in its data.
TIMEOUT_EVENTS: frozenset[str] = frozenset()
#: The keys of ``view(...)["you"]`` besides ``can`` that say what the seat may do now: a game
#: stopped outside the engine (docs/ENGINE.md, "Optional names") empties them with ``can``.
MOVE_KEYS = frozenset({"legal"})

__all__ = [
    "DEADLINE_KINDS",
    "FULL_DECK",
    "KIND",
    "MAX_SEATS",
    "MEMOS",
    "MIN_SEATS",
    "MOVE_KEYS",
    "NAME",
    "ROUND_END_EVENT",
    "SETTINGS_SCHEMA",
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
    "event_view",
    "fire",
    "host_settings",
    "is_card",
    "legal_actions",
    "new_game",
    "pending_deadlines",
    "roles_for",
    "score_hand",
    "trick_winner",
    "view",
    "winners_on_scores",
]
