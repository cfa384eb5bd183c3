"""Computer players for every game: fair by construction, three levels, one search.

A bot decides from its seat's ``Observation`` only -- a frozen record of the redacted views and
events the seat's socket received and of its own past decisions (``games.bots.observation``) --
through ``Bot.decide(observation, now, rng)`` (callers: ``ask(bot, memory, now, rng)``), which
returns a wire action (``Action.to_wire()`` form) or ``None``.  Levels: ``random`` (the benchmark's
floor), ``easy``, ``medium``, ``hard`` (SO-ISMCTS, ``games.bots.ismcts``).  Each game supplies one
module here (``games.bots.crisp``): its knowledge tracker and determiniser, its heuristics and its
``ismcts.SearchGame``.  Standard library only, like the engines: no Django, so a Celery task, a
test or the benchmark runs the same code.  See docs/BOTS.md.

How the service layer calls a bot (``games.services.game_bot_move``)::

    memory = Memory.from_json(seat.bot_memory)        # or Memory("crisp", seat_no)
    memory.observe(view=frame["state"]["state"], events=frame["events"])   # every frame
    action = ask(bot_for(game.kind, seat.bot_level), memory, clock.now_ms(), random.Random())
    seat.bot_memory = memory.to_json()                 # its past decisions are in it too
    if action is not None:
        services.game_act(game=game, seat=seat_no, action=action)   # the same path as people
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .base import LEVELS, Bot, Budget, Stats, ask
from .observation import Decision, Memory, Observation, ObservationError

#: kind -> the bot module of that game (same keys as ``games.engines.KINDS``).
GAMES: dict[str, str] = {
    "crisp": "games.bots.crisp",
    "cribbage": "games.bots.cribbage",
    "triple_crown": "games.bots.triple_crown",
}


def game_for(kind: str) -> ModuleType:
    """The bot module of ``kind``; ``KeyError`` for a game without bots."""
    return importlib.import_module(GAMES[kind])


def bot_for(kind: str, level: str, *, budget: Budget | None = None) -> Bot:
    """A fresh bot of ``kind`` at ``level`` (``budget`` only matters for ``hard``).

    >>> bot_for("crisp", "medium")
    <MediumBot crisp/medium>
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; one of {', '.join(LEVELS)}")
    cls = game_for(kind).BOTS[level]
    if level == "hard":
        return cls(budget=budget)
    return cls()


__all__ = [
    "GAMES",
    "LEVELS",
    "Bot",
    "Budget",
    "Decision",
    "Memory",
    "Observation",
    "ObservationError",
    "Stats",
    "ask",
    "bot_for",
    "game_for",
]
