"""Crisp's refusal codes (the error type itself is ``games.engines.base.IllegalAction``).

Every refusal carries a stable machine ``code`` (the web layer maps it to HTTP / WebSocket error
payloads and clients may switch on it) and a human ``reason``.  A reason never contains a card
value the actor may not see: it is built only from public facts and the actor's own held card.
"""

from __future__ import annotations

# The error type and the codes every engine shares (re-exported: Crisp's code list is complete
# here, and the type is the one the web layer catches for every game).
from ..base import (  # noqa: F401
    BAD_ACTION,
    BAD_SEAT,
    BAD_SETTINGS,
    GAME_FINISHED,
    NOT_YOUR_TURN,
    IllegalAction,
)

# Crisp's own stable codes.  Never rename one; add new ones instead.
ROUND_OVER = "round_over"  # between the reveal and the next deal
TOO_EARLY = "too_early"  # memorise period or the 2 s start delay not over yet
WRONG_PHASE = "wrong_phase"  # e.g. swap with nothing drawn, draw while holding a card,
# a move before answering "Call crisp?" (R28), a pass in a live game
ALREADY_LOOKED = "already_looked"
LOOK_EXPIRED = "look_expired"  # the seat's first turn has begun (R3, R16)
PILE_DRAW_OFF = "pile_draw_off"  # setting 3 not enabled
PILE_EMPTY = "pile_empty"
SPECIAL_NOT_SWAPPABLE = "special_not_swappable"  # J/Q/K from the deck (section 5)
MUST_SWAP = "must_swap"  # a card taken from the pile (section 10, setting 3)
MUST_PLAY_KING = "must_play_king"  # a King from the deck (section 5)
WRONG_CARD = "wrong_card"  # jack/queen/king action without that card held
NO_EFFECT_FROM_PILE = "no_effect_from_pile"  # J/Q/K taken from the pile is a plain 10
QUEEN_NEEDS_OTHER = "queen_needs_other_player"  # R9
BAD_TARGET = "bad_target"  # Queen target seat out of range
NO_WINDOW = "no_window"  # this seat has no crisp window (never opened, or turn timed out)
WINDOW_CLOSED = "window_closed"  # the seat's window has passed
ALREADY_CALLED = "already_called"  # R12: a call already stands this round
FINAL_TURNS = "final_turns"  # section 7: nobody may call during the final turns
