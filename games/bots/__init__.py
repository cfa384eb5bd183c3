"""Computer players for every game: fair by construction, four levels in one frame, one search.

A bot decides from its seat's ``Observation`` only -- a frozen record of the redacted views and
events the seat's socket received and of its own past decisions (``games.bots.observation``) --
through ``Bot.decide(observation, now, rng)`` (callers: ``ask(bot, memory, now, rng)``), which
returns a wire action (``Action.to_wire()`` form) or ``None``.  Levels: ``random`` (the benchmark's
floor), ``easy``, ``medium``, ``hard`` (SO-ISMCTS, ``games.bots.ismcts``), one frame for every game
(``games.bots.base.Level``).  Each game supplies one module here, named after its kind in the
engine registry (``games.bots.<kind>``): its knowledge tracker and determiniser, its heuristics,
its rollout policy and horizon (an ``ismcts.EngineSearch``).  Standard library only, like the
engines: no Django, so a Celery task, a test or the benchmark runs the same code.  See docs/BOTS.md.

How the service layer calls a bot (``games.services.game_bot_move``, run by the Celery task
``games.tasks.bot_move``)::

    memory = Memory.from_json(seat.bot_memory)   # or Memory(game.kind, seat_no, salt=...)
    memory.observe(view=..., events=[...])       # the seat's payloads since, as it got them
    bot = bot_for(game.kind, seat.bot_level, budget=...)
    action = ask(bot, memory, clock.now_ms(), random.Random())
    seat.bot_memory = memory.to_json()           # under the row lock: its past decisions
    if action is not None:                       # the same path as people
        services.game_act(game=game, user=seat.user, action=action,
                          expected_version=version, by_bot=True)
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from games.engines import kinds

from .base import LEVELS, Bot, Budget, HardLevel, Stats, ask
from .observation import Decision, Memory, Observation, ObservationError

#: kind -> the bot module of that game, for the kinds that have computer players.  Derived
#: from the engine registry (``games.engines.KINDS``, the one list of kinds) by convention --
#: a kind's bots are the module ``games.bots.<kind>`` -- so adding a game's bots adds no line
#: here; a kind without such a module has no computer players (the lobby offers none).
GAMES: dict[str, str] = {
    kind: f"{__name__}.{kind}"
    for kind in kinds()
    if importlib.util.find_spec(f"{__name__}.{kind}") is not None
}


def game_for(kind: str) -> ModuleType:
    """The bot module of ``kind``; ``KeyError`` for a game without bots."""
    return importlib.import_module(GAMES[kind])


def bot_for(kind: str, level: str, *, budget: Budget | None = None) -> Bot:
    """A fresh bot of ``kind`` at ``level`` (``budget`` only matters for ``hard``).

    The game module's ``BOTS`` maps each level to its class (``base.Level`` subclasses); a
    hard level (``base.HardLevel``) takes the budget.
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; one of {', '.join(LEVELS)}")
    cls = game_for(kind).BOTS[level]
    if issubclass(cls, HardLevel):
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
