"""What the host may choose in the lobby (T22), as data and as a validator.

T22 fixes everything but the time per move: four seats, a game to 15.  The platform adds the
pace (issue 26): live, or turn-based with 12 h, 1 day or 3 days per move.  ``Settings`` itself
accepts any positive values (tests shorten games); ``host_settings`` enforces the menu.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import PACE_PROPERTIES, host_choices
from .state import Settings

MOVE_SECONDS = (30, 60)

SETTINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "move_seconds": {
            "type": ["integer", "null"],
            "enum": [None, *MOVE_SECONDS],
            "default": None,
            "title": "Time per move",
            "description": (
                "Seconds for each move (a card, or the Double Stakes declaration), or null for "
                "no limit. On time-out the lowest legal card is played; a declaration defaults "
                "to no-trump with the memo Low (T23, T24)."
            ),
        },
        **PACE_PROPERTIES,
    },
}


def host_settings(choices: Mapping[str, Any]) -> Settings:
    """The engine ``Settings`` for a host's lobby choices; missing choices take the defaults.

    >>> host_settings({}).move_seconds is None, host_settings({"move_seconds": 60}).move_seconds
    (True, 60)
    >>> host_settings({"move_seconds": 45})
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: move_seconds must be 30, 60 or null
    >>> host_settings({"pace": "turn_based", "turn_seconds": 86400}).move_ms
    86400000
    >>> host_settings({"pace": "turn_based", "turn_seconds": 60})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: turn_seconds must be 43200, ... or null
    >>> host_settings({"pace": "turn_based", "turn_seconds": 86400, "move_seconds": 30})
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: turn-based: move_seconds must be null
    """
    return Settings(**host_choices(SETTINGS_SCHEMA, choices))


def winners_on_scores(scores: list[int]) -> list[int]:
    """Who wins a game stopped on these totals (the admin's "end now"): the highest total,
    ties all win (T21).

    >>> winners_on_scores([12, 5, 12, 3])
    [0, 2]
    """
    top = max(scores)
    return [i for i, s in enumerate(scores) if s == top]
