"""The optional per-kind hooks of the history features (docs/ENGINE.md, "Optional hooks for
history"): modules beside an engine, ``games/engines/<kind>/{replay,stats,notation}.py``.

A kind without a hook module still gets everything generic (history, POV replays, export,
games/wins/win rate, ratings); the hook only adds what needs the rules' knowledge.  Looked up by
the engine package's name, so this module names no kind.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

from games.engines import KINDS

#: The hook modules an engine package may have.
HOOKS = ("replay", "stats", "notation")


@cache
def hook(kind: str, name: str) -> ModuleType | None:
    """The ``name`` hook module of ``kind``'s engine, or None if that engine has none.

    Only the hook module's own absence means "no hook": an ImportError from inside a hook
    module (a bug in it) propagates rather than silently switching the feature off.
    """
    if name not in HOOKS:
        raise ValueError(f"unknown history hook {name!r}")
    target = f"{KINDS[kind]}.{name}"
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name == target:
            return None
        raise
