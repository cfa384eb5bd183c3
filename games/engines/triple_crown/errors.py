"""Triple Crown's refusal codes (the error type is ``games.engines.base.IllegalAction``).

A code or a reason never depends on anybody's role or hidden cards: every refusal is decided from
public facts (whose turn it is, the suit led, whether a Double Stakes hand was announced) and the
acting seat's own hand, which that seat sees anyway (T25, T27b).
"""

from __future__ import annotations

from ..base import (  # noqa: F401
    BAD_ACTION,
    BAD_SEAT,
    BAD_SETTINGS,
    GAME_FINISHED,
    NOT_YOUR_TURN,
    IllegalAction,
)

# Triple Crown's own stable codes.  Never rename one; add new ones instead.
AWAITING_DECLARATION = "awaiting_declaration"  # a card before the Double Stakes declaration (T9)
NO_DECLARATION = "no_declaration"  # declare in a Crown hand, or a second time (T9: final)
NOT_IN_HAND = "not_in_hand"  # the seat does not hold that card
MUST_FOLLOW = "must_follow"  # holds the suit led and played another (T12)
