"""What the host may choose in the lobby (C25), as data and as a validator.

C25 gives the host exactly one choice, the time per move; the game is always to 121.  The
platform adds the pace (issue 26): live, or turn-based with 12 h, 1 day or 3 days per move.
``SETTINGS_SCHEMA`` is the JSON Schema the lobby form and the OpenAPI schema are built from;
``host_settings`` enforces the menu (``Settings`` itself accepts any positive timer so that
tests can shorten it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import PACE_PROPERTIES, host_choices
from .state import Settings

#: C25: no limit, 30 s or 60 s per move.
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
                "Seconds for each move (laying away two cards, or playing a card), or null "
                "for no limit. When it runs out the server moves for you: it lays away your "
                "two highest cards, or plays your lowest playable card (C25-C29)."
            ),
        },
        **PACE_PROPERTIES,
    },
}


def host_settings(choices: Mapping[str, Any]) -> Settings:
    """The engine ``Settings`` for a host's lobby choices; missing choices take the defaults.

    >>> host_settings({}).to_json()
    {'move_seconds': None, 'target_score': 121, 'pace': 'live', 'turn_seconds': None}
    >>> host_settings({"move_seconds": 45})
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: move_seconds must be 30, 60 or null
    >>> host_settings({"target_score": 61})
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: unknown settings: ['target_score']
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
    """Who wins a game stopped early on these totals (the admin's "end now"): the highest
    total (section 2); a tie makes both winners, as nobody is ahead.

    >>> winners_on_scores([88, 97]), winners_on_scores([40, 40])
    ([1], [0, 1])
    """
    high = max(scores)
    return [i for i, s in enumerate(scores) if s == high]
