"""Helpers shared by the bot tests: a referee loop that exposes the true state at each step."""

from __future__ import annotations

from collections.abc import Iterator

from games.bots import Bot, Memory
from games.engines.crisp import (
    GameState,
    Settings,
)
from tests.referee import referee_states


def crisp_states(
    bots: list[Bot],
    *,
    seed: str,
    settings: Settings | None = None,
    think_ms: int = 300,
    max_steps: int = 20_000,
) -> Iterator[tuple[GameState, list[Memory], int]]:
    """Play a Crisp game between ``bots`` like ``games.bots.arena`` does, yielding the true
    state, the seats' memories and ``now`` after every change (for the tests to compare): the
    tests' one referee, tests/referee.py."""
    return referee_states(
        "crisp",
        bots,
        seed=seed,
        settings=settings or Settings(target_score=50),
        think_ms=think_ms,
        max_steps=max_steps,
    )
