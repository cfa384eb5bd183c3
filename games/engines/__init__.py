"""The game engines: one pure package per kind of game (standard library only).

This registry is the one place that lists the kinds.  The web layer (services, selectors,
broadcast, timers, API, consumers, admin) looks a game's engine up here by its ``Game.kind``
and then speaks only the interface of docs/ENGINE.md; it never asks which kind it holds.
Adding a game means adding its package here (plus its table module and rules page).

Modules are imported lazily so that importing one engine never imports another.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: kind -> engine package, in the order the lobby offers them.
KINDS: dict[str, str] = {
    "crisp": "games.engines.crisp",
    "cribbage": "games.engines.cribbage",
    "triple_crown": "games.engines.triple_crown",
}


#: The kind a game is when nobody says otherwise (the first game of the site, and the kind of
#: every game created before there were several).
DEFAULT_KIND = next(iter(KINDS))


def engine_for(kind: str) -> ModuleType:
    """The engine package of ``kind``; ``KeyError`` for a kind that does not exist."""
    return importlib.import_module(KINDS[kind])


def kinds() -> list[str]:
    """Every kind, in the lobby's order."""
    return list(KINDS)
