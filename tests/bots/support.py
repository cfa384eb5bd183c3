"""Helpers shared by the bot tests: a referee loop that exposes the true state at each step."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from games.bots import Bot, Memory, ask
from games.engines.crisp import (
    Action,
    GameState,
    Settings,
    advance,
    apply,
    event_view,
    new_game,
    pending_deadlines,
    view,
)


def crisp_states(
    bots: list[Bot],
    *,
    seed: str,
    settings: Settings | None = None,
    think_ms: int = 300,
    max_steps: int = 20_000,
    on_step: Callable[[GameState, list[Memory], int], None] | None = None,
) -> Iterator[tuple[GameState, list[Memory], int]]:
    """Play a Crisp game between ``bots`` like ``games.bots.arena`` does, yielding the true
    state, the seats' memories and ``now`` after every change (for the tests to compare)."""
    n = len(bots)
    st, ev = new_game(seats=n, settings=settings or Settings(target_score=50), seed=seed, now=0)
    mems = [Memory("crisp", i, salt=f"{seed}:{i}") for i in range(n)]
    rng = random.Random(seed)
    rngs = [random.Random(rng.getrandbits(32)) for _ in range(n)]
    now = 0

    def feed(events: list[Any]) -> None:
        for i, m in enumerate(mems):
            m.observe(view=view(st, i, now), events=[event_view(e, i) for e in events])

    feed(ev)
    yield st, mems, now
    last = 0
    for _ in range(max_steps):
        if st.status != "playing":
            return
        acted = False
        for k in range(n):
            i = (last + k) % n
            wire = ask(bots[i], mems[i], now, rngs[i])
            if wire is None:
                continue
            st, ev = apply(st, i, Action.from_wire(wire), now)
            feed(ev)
            last, acted = i, True
            now += think_ms
            break
        if not acted:
            now = max(now, pending_deadlines(st)[0].at)
            st, ev = advance(st, now)
            feed(ev)
        yield st, mems, now
    raise AssertionError("the game did not end")
