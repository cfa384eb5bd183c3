"""Read by mypy, never run: assignments mypy must refuse, so the check of engines_conform.py
can fail -- a module lacking a member of the contract, and one whose member has another type."""

from __future__ import annotations

from typing import Protocol

from games.engines import crisp
from games.engines.protocol import Engine


class EngineWithMore(Engine, Protocol):
    def no_such_function(self, state: object) -> None: ...


class KindAsNumber(Protocol):
    KIND: int


MISSING: EngineWithMore = crisp  # error: no_such_function
WRONG_TYPE: KindAsNumber = crisp  # error: KIND is a str
