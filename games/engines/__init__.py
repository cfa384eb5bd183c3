"""The game engines: one pure package per kind of game (standard library only).

This registry is the one place that lists the kinds.  The web layer (services, selectors,
broadcast, timers, API, consumers, admin) looks a game's engine up here by its ``Game.kind``
and then speaks only the interface of docs/ENGINE.md (typed: ``games.engines.protocol.Engine``);
it never asks which kind it holds, nor whether the engine has a name.
Adding a game means adding its package here (plus its table module and rules page).

Modules are imported lazily so that importing one engine never imports another.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # the Protocol is a description; importing an engine never needs it
    from .protocol import Engine

#: kind -> engine package, in the order the lobby offers them.
KINDS: dict[str, str] = {
    "crisp": "games.engines.crisp",
    "cribbage": "games.engines.cribbage",
    "triple_crown": "games.engines.triple_crown",
}


#: The kind a game is when nobody says otherwise (the first game of the site, and the kind of
#: every game created before there were several).
DEFAULT_KIND = next(iter(KINDS))


#: kind -> its engine package, once imported (``engine_for``): ``importlib.import_module`` on
#: every call cost an action a few microseconds of its import machinery (issue 25).
_IMPORTED: dict[str, Engine] = {}


def engine_for(kind: str) -> Engine:
    """The engine package of ``kind``, typed as the contract every engine implements
    (``games.engines.protocol.Engine``); ``KeyError`` for a kind that does not exist."""
    try:
        return _IMPORTED[kind]
    except KeyError:
        engine = _IMPORTED[kind] = cast("Engine", importlib.import_module(KINDS[kind]))
        return engine


def kinds() -> list[str]:
    """Every kind, in the lobby's order."""
    return list(KINDS)
