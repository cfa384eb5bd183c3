"""Cribbage's refusal codes (the error type itself is ``games.engines.base.IllegalAction``).

Every refusal carries a stable machine ``code`` (clients may switch on it) and a human
``reason``.  A reason is built only from public facts and the actor's own cards: it never says
what the opponent holds (C30i).
"""

from __future__ import annotations

from ..base import (  # noqa: F401  (re-exported: the complete code list is here)
    BAD_ACTION,
    BAD_SEAT,
    BAD_SETTINGS,
    GAME_FINISHED,
    NOT_YOUR_TURN,
    IllegalAction,
)

WRONG_PHASE = "wrong_phase"  # e.g. playing a card during the lay-away
ALREADY_LAID_AWAY = "already_laid_away"  # C5: a lay-away is final
NOT_IN_HAND = "not_in_hand"  # the card is not among the actor's unplayed cards
OVER_THIRTY_ONE = "over_thirty_one"  # section 3.5: the count may not pass 31

CODES = (
    BAD_ACTION,
    BAD_SEAT,
    BAD_SETTINGS,
    GAME_FINISHED,
    NOT_YOUR_TURN,
    WRONG_PHASE,
    ALREADY_LAID_AWAY,
    NOT_IN_HAND,
    OVER_THIRTY_ONE,
)
