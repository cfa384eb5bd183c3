"""What the host may choose in the lobby (rules section 10), as data and as a validator.

``SETTINGS_SCHEMA`` is a JSON Schema object: the web layer renders the lobby form and the
OpenAPI schema from it, so the menu is written once, here, beside the rules it belongs to.
``Settings`` itself accepts any positive values (tests shorten timers); the host's menu is
narrower, and ``host_settings`` is where it is enforced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import BAD_SETTINGS, PACE_PROPERTIES, TURN_BASED, IllegalAction, host_choices
from .state import Settings

TARGET_SCORES = (50, 100, 150)
DRAW_SECONDS = (30, 45, 60)

SETTINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "target_score": {
            "type": "integer",
            "enum": list(TARGET_SCORES),
            "default": 100,
            "title": "End score",
            "description": "The game ends when a running total reaches it (section 9).",
        },
        "draw_seconds": {
            "type": ["integer", "null"],
            "enum": [*DRAW_SECONDS, None],
            "default": None,
            "title": "Time per draw",
            "description": "Seconds per draw, or null for no limit (section 10, R18).",
        },
        "pile_draw": {
            "type": "boolean",
            "default": False,
            "title": "Drawing from the discard pile",
            "description": "Whether a turn may take the top of the discard pile (section 10).",
        },
        # Issue 26: live or turn-based (R28), the same two properties in every game.
        **PACE_PROPERTIES,
    },
}


def host_settings(choices: Mapping[str, Any]) -> Settings:
    """The engine ``Settings`` for a host's lobby choices; missing choices take the defaults.

    >>> host_settings({"target_score": 50}).target_score
    50
    >>> host_settings({"target_score": 70})
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: target_score must be 50, 100 or 150
    >>> host_settings({"pile_draw": 1})
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: pile_draw must be true or false
    >>> host_settings({"pace": "turn_based", "turn_seconds": 86400}).move_ms
    86400000
    >>> host_settings({"pace": "turn_based"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    games.engines.base.IllegalAction: bad_settings: a turn-based game needs turn_seconds...
    """
    chosen = host_choices(SETTINGS_SCHEMA, choices)
    if chosen["pace"] == TURN_BASED:
        # R28: the move clock IS turn_seconds; a live draw clock beside it would be a second,
        # contradicting clock.  Refused with the reason rather than silently dropped.
        if chosen["turn_seconds"] is None:
            raise IllegalAction(
                BAD_SETTINGS, "a turn-based game needs turn_seconds: 43200, 86400 or 259200"
            )
        if chosen["draw_seconds"] is not None:
            raise IllegalAction(
                BAD_SETTINGS,
                "a turn-based game has no time per draw: draw_seconds must be null "
                "(each move has turn_seconds)",
            )
    return Settings(**chosen)


def winners_on_scores(scores: list[int]) -> list[int]:
    """Who wins a game stopped on these running totals (the admin's "end now"): the lowest
    total, ties all win (section 9).

    >>> winners_on_scores([12, 5, 5])
    [1, 2]
    """
    low = min(scores)
    return [i for i, s in enumerate(scores) if s == low]
